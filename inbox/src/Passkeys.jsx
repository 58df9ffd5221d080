// The header's "Passkeys": the signed-in operator's WebAuthn credentials (GET/DELETE
// /api/me/webauthn/credentials) and adding one (register/options, then navigator.credentials.create,
// then register). A passkey confirms the approve of a high risk tool call (ToolApproval.jsx). Shown only
// where the server has passkeys set up (`passkeys` in GET /api/me: no request that can only fail).
import { useCallback, useEffect, useState } from "react";
import { api } from "./api.js";
import { createPasskey, passkeysSupported } from "./passkeys.js";

function readable(iso) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function PasskeysMenu() {
  const [passkeys, setPasskeys] = useState(null); // null: not configured here (or not read yet)
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const load = useCallback(() => api.passkeys().then((r) => setPasskeys(r.passkeys), () => setPasskeys(null)), []);
  useEffect(() => {
    load();
  }, [load]);
  if (passkeys === null) return null;

  const act = async (work) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      await load();
    } catch (err) {
      setError(err.name === "NotAllowedError" ? "The passkey prompt was closed: nothing was changed." : err.message);
    } finally {
      setBusy(false);
    }
  };
  const add = (event) => {
    event.preventDefault();
    if (!passkeysSupported()) {
      setError("This browser has no passkeys (WebAuthn).");
      return;
    }
    act(async () => {
      const { options } = await api.passkeyOptions();
      await api.registerPasskey(await createPasskey(options), name.trim() || "passkey");
      setName("");
    });
  };
  const toggle = () => {
    if (!open) load(); // read again on opening: a step-up since has moved a passkey's "last used"
    setOpen(!open);
  };
  return (
    <div className="passkeys">
      <button type="button" aria-expanded={open} aria-controls="passkeys-panel" onClick={toggle}>
        Passkeys ({passkeys.length})
      </button>
      {open && (
        <section id="passkeys-panel" className="passkeys-panel" aria-label="Passkeys">
          <p className="hint">A passkey confirms your approval of a high risk tool call.</p>
          {passkeys.length ? (
            <ul>
              {passkeys.map((p) => (
                <li key={p.credential_id}>
                  <span>
                    <strong>{p.name}</strong> added {readable(p.created_at)}
                    {p.last_used_at && <> · last used {readable(p.last_used_at)}</>}
                  </span>
                  <button
                    type="button"
                    disabled={busy}
                    aria-label={`Remove the passkey ${p.name}`}
                    onClick={() => act(() => api.deletePasskey(p.credential_id))}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          ) : (
            <p>No passkey yet.</p>
          )}
          <form onSubmit={add} aria-label="Add a passkey">
            <label>
              Name
              <input value={name} placeholder="this laptop" maxLength={64} onChange={(e) => setName(e.target.value)} />
            </label>
            <button type="submit" disabled={busy}>
              Add a passkey
            </button>
          </form>
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
        </section>
      )}
    </div>
  );
}
