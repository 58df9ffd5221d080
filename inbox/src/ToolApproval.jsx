import { useCallback, useEffect, useMemo, useState } from "react";
import { api, deliveryPending, DELIVERY_PENDING_TEXT, winnerText } from "./api.js";
import { resultClass, until, useInterval } from "./util.js";
import { When } from "./text.jsx";
import { SignIn } from "./SignIn.jsx";
import { ClaimBar } from "./ClaimBar.jsx";
import { useMe } from "./me.js";
import { Arguments } from "./ToolArguments.jsx";
import { ShadowLine } from "./Shadow.jsx";
import { answerWithPasskey } from "./passkeys.js";

const EXPIRY_CHOICES = [
  [900, "15 minutes"],
  [3600, "1 hour"],
  [28800, "8 hours"],
  [86400, "24 hours"],
];

// The changed top-level arguments of an edit: old -> new, as Interrupt.jsx previews state edits.
export function argumentChanges(before, after) {
  const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])];
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => ({ key: k, before: before[k], after: after[k] }));
}

// A server 422 path ("answer.arguments.path") as the argument it names ("path"), or null.
export function argumentAt(path) {
  const m = /^answer\.arguments\.?(.*)$/.exec(path || "");
  return m ? m[1] || "(all arguments)" : null;
}

// Why an answer was refused, in the page's words (a passkey's own refusals say what to do).
function refusalText(err) {
  if (err.status === 409 && err.body.reason === "no_passkey")
    return "This call's risk asks for a passkey, and you have none: add one under Menu → Passkeys, then approve.";
  if (err.status === 409) return `This tool call was ${winnerText(err)}.`;
  if (err.name === "NotAllowedError") return "The passkey prompt was closed: nothing was approved.";
  return err.message;
}

function decisionText(d) {
  const verbOf = { approve: "Approved", deny: "Denied", edit: "Approved with edits" }[d.decision] || d.decision;
  // A rule's decision names the rule and the policy's version in words, not the raw `policy:<rule>`.
  if (d.outcome === "policy") return `${verbOf}. Decided by policy rule ${d.rule} (version ${d.policy_version})${d.reason ? `: ${d.reason}` : ""}.`;
  const by = d.outcome === "timed_out_default" ? "the deadline's default" : d.outcome === "grant" ? "a remembered grant" : d.decided_by || "someone";
  return `${verbOf} by ${by}${d.reason ? `: ${d.reason}` : ""}.`;
}

// A person's decision as a shadow policy's allow or deny is compared with it (null: none yet, or nobody
// decided: a rule, a remembered grant, the deadline's default).
export function personDecided(d) {
  if (!d || ["policy", "grant", "timed_out_default"].includes(d.outcome)) return null;
  return d.decision === "deny" ? "deny" : "allow";
}

function EditArguments({ original, text, setText, fieldError }) {
  const parsed = useMemo(() => {
    try {
      const value = JSON.parse(text);
      if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "the arguments are a JSON object" };
      return { value };
    } catch (err) {
      return { error: `not JSON: ${err.message}` };
    }
  }, [text]);
  const changes = parsed.value ? argumentChanges(original, parsed.value) : [];
  return (
    <>
      <label htmlFor="edit-arguments">Arguments (JSON)</label>
      <textarea
        id="edit-arguments"
        rows={Math.min(14, text.split("\n").length + 1)}
        value={text}
        onChange={(e) => setText(e.target.value)}
        spellCheck={false}
        aria-invalid={Boolean(parsed.error || fieldError)}
        aria-describedby="edit-error"
      />
      {parsed.error && <p className="error">{parsed.error}</p>}
      {fieldError && (
        <p id="edit-error" className="error" role="alert">
          <code>{fieldError.field}</code>: {fieldError.message}
        </p>
      )}
      {changes.length > 0 && (
        <ul className="changes" aria-label="Argument changes">
          {changes.map((c) => (
            <li key={c.key}>
              <code>{c.key}</code>: {c.before === undefined ? "(missing)" : JSON.stringify(c.before)} →{" "}
              {c.after === undefined ? "(removed)" : JSON.stringify(c.after)}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function ToolApprovalScreen({ runId, interactionId }) {
  const [view, setView] = useState(null);
  const [error, setError] = useState(null);
  const [mode, setMode] = useState(null); // null | "deny" | "edit"
  const [reason, setReason] = useState("");
  const [editText, setEditText] = useState("");
  const [fieldError, setFieldError] = useState(null);
  const [remember, setRemember] = useState("");
  const [expiry, setExpiry] = useState(String(EXPIRY_CHOICES[1][0]));
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const signedIn = useMe();
  const [claimedAs, setClaimedAs] = useState(null);
  const me = claimedAs || (signedIn && signedIn.principal);
  const load = () => api.toolApproval(runId, interactionId).then(setView, setError);
  const claim = useCallback(
    async (force, why, holder) => {
      try {
        const claimed = await api.claimToolApproval(runId, interactionId, force, why, holder);
        setClaimedAs(claimed.approval.claimed_by);
        setView(claimed.approval);
      } catch (err) {
        // 409: someone else's claim (or already decided): show the approval as it is now
        if (err.status === 409 && err.body.interaction) api.toolApproval(runId, interactionId).then(setView, setError);
        else setResult({ ok: false, text: err.message });
      }
    },
    [runId, interactionId],
  );
  // Claim on open, as an interrupt's page does: a free approval becomes ours; another's shows a take-over.
  useEffect(() => {
    api.toolApproval(runId, interactionId).then((v) => {
      setView(v);
      setEditText(JSON.stringify(v.arguments, null, 2));
      if (v.status === "pending") claim(false);
    }, setError);
  }, [runId, interactionId, claim]);

  // Decided elsewhere (the CLI, Slack, another operator) or by its deadline: the page says so within 3 s.
  useInterval(() => view && view.status === "pending" && !busy && load(), 3000);

  if (error && error.status === 401) return <SignIn />;
  if (error) return <p className="error" role="alert">{error.message}</p>;
  if (!view) return <p role="status">Loading…</p>;
  const pending = view.status === "pending";

  const send = async (answer) => {
    setBusy(true);
    setFieldError(null);
    try {
      // a high risk approve may take a passkey: the server says so, and the browser's prompt asks for it
      const prompt = () => setResult({ ok: true, text: "Confirm with your passkey: this call's risk asks for it." });
      const answered = await answerWithPasskey(runId, interactionId, answer, prompt);
      if (deliveryPending(answered)) setResult({ ok: true, pending: true, text: DELIVERY_PENDING_TEXT });
      else if (answered && answered.status === "pending" && answered.approval)
        setResult({ ok: true, text: `Vote counted: ${answered.approval.approvals} of ${answered.approval.needed} approvals.` });
      else setResult(null); // the decision line, read back from the server, says what was decided and by whom
      setMode(null);
      await load();
    } catch (err) {
      const field = err.status === 422 ? argumentAt(err.body.path) : null;
      if (field) setFieldError({ field, message: err.body.reason || err.message });
      else setResult({ ok: false, text: refusalText(err) });
    } finally {
      setBusy(false);
    }
  };
  const rememberOf = () => (remember ? { remember: { scope: remember, expires_in_seconds: Number(expiry) } } : {});
  const approve = () => send({ decision: "approve", ...rememberOf() });
  const deny = (e) => {
    e.preventDefault();
    if (reason.trim()) send({ decision: "deny", reason: reason.trim() });
  };
  const edit = (e) => {
    e.preventDefault();
    let args;
    try {
      args = JSON.parse(editText);
    } catch {
      return; // the editor already says why
    }
    // The server remembers a grant only with an approve: an edit is this one call.
    send({ decision: "edit", arguments: args, ...(reason.trim() ? { reason: reason.trim() } : {}) });
  };
  return (
    <section aria-labelledby="t-title" className="card tool-approval">
      <p className="crumbs">
        <a href="#/">Inbox</a> / <a href={`#/run/${encodeURIComponent(runId)}`}>run {runId}</a> / tool approval
      </p>
      <h1 id="t-title">
        Run <code>{view.tool}</code>?
      </h1>
      <p className="meta" aria-label="Tool approval status">
        <span className={`risk risk-${view.risk}`}>{view.risk} risk</span>
        <span>{view.status}</span>
        {view.session && <span>session {view.session}</span>}
        <span title={view.digest}>digest {view.digest.slice(0, 12)}…</span>
      </p>
      <blockquote className="agent-reason" aria-label="The agent's reason">
        {view.reason}
      </blockquote>
      <ClaimBar
        view={{ status: view.status, claimedBy: view.claimed_by, leaseExpiresAt: view.lease_expires_at }}
        me={me}
        onClaim={claim}
      />
      <Arguments args={view.arguments} />
      {pending && view.expires_at && (
        <p className="deadline" role="note">
          {/* The view does not carry the declared default; deny is the default unless the agent declared one. */}
          Unless answered by {until(view.expires_at)} (<When iso={view.expires_at} />
          ), the call is denied (or the agent's declared default is taken).
        </p>
      )}
      {view.decision && (
        <p role="status" aria-label="Decision">
          {decisionText(view.decision)}
          {view.decision.decision === "edit" && (
            <>
              {" "}
              Runs with <code>{JSON.stringify(view.decision.arguments)}</code>.
            </>
          )}
          {view.consumed && " The agent has run it."}
        </p>
      )}
      <ShadowLine runId={runId} interactionId={interactionId} decided={personDecided(view.decision)} />
      {pending && (
        <div className="tool-actions">
          <fieldset className="remember">
            <legend>Remember (with Approve)</legend>
            <label htmlFor="remember-scope">Also allow this tool</label>
            <select id="remember-scope" value={remember} onChange={(e) => setRemember(e.target.value)}>
              <option value="">only this call</option>
              <option value="run">for this run</option>
              {view.session && <option value="session">for this session</option>}
            </select>
            {remember && (
              <>
                <label htmlFor="remember-expiry">for</label>
                <select id="remember-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
                  {EXPIRY_CHOICES.map(([s, words]) => (
                    <option key={s} value={s}>
                      {words}
                    </option>
                  ))}
                </select>
              </>
            )}
          </fieldset>
          <div className="options big" role="group" aria-label="Decide the tool call">
            <button type="button" className="primary" disabled={busy} onClick={approve}>
              Approve
            </button>
            <button type="button" disabled={busy} aria-pressed={mode === "deny"} onClick={() => setMode(mode === "deny" ? null : "deny")}>
              Deny…
            </button>
            <button type="button" disabled={busy} aria-pressed={mode === "edit"} onClick={() => setMode(mode === "edit" ? null : "edit")}>
              Edit &amp; approve…
            </button>
          </div>
          {mode === "deny" && (
            <form onSubmit={deny} aria-label="Deny">
              <label htmlFor="deny-reason">Reason (the model sees it)</label>
              <input id="deny-reason" value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
              <button type="submit" disabled={busy || !reason.trim()}>
                Deny
              </button>
              {!reason.trim() && <p className="hint">A deny needs a reason: the agent reads it.</p>}
            </form>
          )}
          {mode === "edit" && (
            <form onSubmit={edit} aria-label="Edit and approve">
              <EditArguments original={view.arguments} text={editText} setText={setEditText} fieldError={fieldError} />
              <button type="submit" className="primary" disabled={busy}>
                Approve the edited call
              </button>
            </form>
          )}
        </div>
      )}
      {result && (
        <p className={resultClass(result)} role={result.ok ? "status" : "alert"}>
          {result.text}
        </p>
      )}
      {!pending && <a href="#/">Back to the inbox</a>}
    </section>
  );
}
