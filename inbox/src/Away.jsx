// The signed-in operator's away (PUT/GET/DELETE /api/me/away): "Away until ... · delegate: bob" in the
// header with a Back button, or a small form to set it. The server checks the rules (a future time, at
// most 90 days, a delegate who is not you and not away too) and the form shows its message as it is.
import { useEffect, useState } from "react";
import { api } from "./api.js";

function readable(iso) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function AwayMenu() {
  const [away, setAway] = useState(null);
  const [editing, setEditing] = useState(false);
  const [until, setUntil] = useState("");
  const [delegate, setDelegate] = useState("");
  const [error, setError] = useState(null);
  useEffect(() => {
    api.away().then(setAway, () => setAway(null));
  }, []);
  const save = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      // datetime-local is the browser's local time: sent with its zone, as the instant the person meant
      setAway(await api.setAway(new Date(until).toISOString(), delegate.trim()));
      setEditing(false);
    } catch (err) {
      setError(err.message);
    }
  };
  const back = async () => {
    setError(null);
    try {
      setAway(await api.clearAway());
    } catch (err) {
      setError(err.message);
    }
  };
  if (away === null) return null;
  return (
    <div className="away">
      {away.away ? (
        <>
          <span role="status">
            Away until {readable(away.until)} · delegate: {away.delegate}
          </span>
          <button type="button" onClick={back}>
            Back
          </button>
        </>
      ) : !editing ? (
        <button type="button" onClick={() => setEditing(true)}>
          Set away
        </button>
      ) : (
        <form className="away-form" onSubmit={save} aria-label="Away">
          <label>
            Until
            <input type="datetime-local" required value={until} onChange={(e) => setUntil(e.target.value)} />
          </label>
          <label>
            Delegate
            <input type="text" required value={delegate} onChange={(e) => setDelegate(e.target.value)} />
          </label>
          <button type="submit">Save</button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
