import { useState } from "react";
import { until } from "./util.js";

// The claim banner of a pending interrupt or tool approval: free, the caller's, or someone else's with a
// take-over (force with a reason, decided on the holder shown). `view` is {status, claimedBy, leaseExpiresAt}.
export function ClaimBar({ view, me, onClaim }) {
  const [why, setWhy] = useState("");
  if (view.status !== "pending") return null;
  const holder = view.claimedBy;
  if (!holder) return <p role="status">Not claimed.</p>;
  const lease = until(view.leaseExpiresAt);
  if (holder === me) return <p role="status" className="ok">Claimed by you ({me}) until {lease}.</p>;
  return (
    <div className="claimbar" role="alert">
      Claimed by <strong>{holder}</strong> until {lease}.{" "}
      <label htmlFor="takeover-reason">Reason to take over</label>{" "}
      <input id="takeover-reason" value={why} onChange={(e) => setWhy(e.target.value)} />{" "}
      <button type="button" disabled={!why.trim()} onClick={() => onClaim(true, why.trim(), holder)}>
        Take over
      </button>
    </div>
  );
}
