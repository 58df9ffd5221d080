// Who the browser is signed in as (GET /api/me): the interrupt screen tells the caller's claim from another's.
import { createContext, useContext } from "react";

export const MeContext = createContext(null);
export const useMe = () => useContext(MeContext);
