import { useCallback, useEffect, useMemo, useState } from "react";
import Form from "@rjsf/core";
import { validator } from "./validator.js";
import { api, deliveryPending, DELIVERY_PENDING_TEXT, winnerText } from "./api.js";
import { previewStateEdits } from "./stateEdits.js";
import { SignIn } from "./SignIn.jsx";
import { resultClass, useInterval } from "./util.js";
import { When } from "./text.jsx";
import { useMe } from "./me.js";
import { ShadowLine } from "./Shadow.jsx";
import { ClaimBar } from "./ClaimBar.jsx";

// The light `schema` ({type|"enum", enum, default, title, description}) as the JSON Schema it means
// (layers/baton/python/baton/domain/answer_schema.py); `jsonSchema` wins when both are given.
export function formSchema(view) {
  if (view.jsonSchema) return view.jsonSchema;
  const light = view.schema;
  if (!light) return { type: "string", title: "Value" };
  const schema = { ...light };
  if (schema.type === "enum" || !schema.type) delete schema.type;
  if (!schema.title) schema.title = "Value";
  return schema;
}

// A server 422 path ("$", "$.release", "$.items[1].n") as the error schema rjsf shows next to the field.
export function errorAt(path, message) {
  const keys = (path || "$").replace(/^\$\.?/, "").split(/\.|\[(\d+)\]/).filter((k) => k !== undefined && k !== "");
  const root = {};
  let node = root;
  for (const key of keys) node = node[key] = {};
  node.__errors = [message];
  return root;
}

function StateEdits({ snapshot, text, setText, serverError }) {
  const preview = useMemo(() => previewStateEdits(snapshot, text), [snapshot, text]);
  return (
    <fieldset>
      <legend>State edits</legend>
      <label htmlFor="state-edits">One path=value per line (e.g. config.flag=true)</label>
      <textarea
        id="state-edits"
        rows={3}
        value={text}
        onChange={(e) => setText(e.target.value)}
        aria-describedby="state-preview"
        spellCheck={false}
      />
      {preview.errors.map((error) => (
        <p key={error.line} className="error">
          line {error.line}: {error.message}
        </p>
      ))}
      {serverError && (
        <p className="error" role="alert">
          {serverError}
        </p>
      )}
      {preview.changes.length > 0 && (
        <ul className="changes" aria-label="State changes">
          {preview.changes.map((c, n) => (
            <li key={n}>
              <code>{c.path}</code>: {c.before === undefined ? "(missing)" : JSON.stringify(c.before)} →{" "}
              {JSON.stringify(c.after)}
            </li>
          ))}
        </ul>
      )}
      {preview.edits.length > 0 && (
        <details id="state-preview">
          <summary>Preview of the whole state after the edits</summary>
          <pre aria-label="Edited state preview">{JSON.stringify(preview.state, null, 2)}</pre>
        </details>
      )}
    </fieldset>
  );
}

// Who resumed it, in words: a policy rule (`policy:<rule>`, issue 31) is named as a rule, not as a person.
export function resolvedByText(who) {
  return who && who.startsWith("policy:") ? `decided by policy rule ${who.slice("policy:".length)}` : `by ${who}`;
}

export function InterruptScreen({ interruptId }) {
  const [view, setView] = useState(null);
  const signedIn = useMe();
  const [claimedAs, setClaimedAs] = useState(null);
  const me = claimedAs || (signedIn && signedIn.principal);
  const [error, setError] = useState(null);
  const [formData, setFormData] = useState(undefined);
  const [edits, setEdits] = useState("");
  const [extraErrors, setExtraErrors] = useState(undefined);
  const [editError, setEditError] = useState(null);
  const [result, setResult] = useState(null);
  const [reason, setReason] = useState("");

  const refresh = useCallback(
    () => api.interrupt(interruptId).then((v) => (v.id ? setView(v) : null), setError),
    [interruptId],
  );
  const claim = useCallback(
    async (force, why, holder) => {
      try {
        const claimed = await api.claim(interruptId, force, why, holder);
        setClaimedAs(claimed.interrupt.claimedBy);
        setView(claimed.interrupt);
      } catch (err) {
        if (err.status === 409 && err.body.interrupt) setView(err.body.interrupt);
        else if (err.status !== 410) setResult({ ok: false, text: err.message });
      }
    },
    [interruptId],
  );
  // Claim on open: a free interrupt becomes ours; someone else's claim is shown with a take-over.
  useEffect(() => {
    api.interrupt(interruptId).then((v) => {
      setView(v);
      setFormData(v.jsonSchema ? v.jsonSchema.default : v.schema && v.schema.default);
      if (v.status === "pending") claim(false);
    }, setError);
  }, [interruptId, claim]);
  useInterval(() => view && view.status === "pending" && refresh(), 3000);

  if (error && error.status === 401) return <SignIn />;
  if (error) return <p className="error" role="alert">{error.message}</p>;
  if (!view) return <p role="status">Loading…</p>;
  const pending = view.status === "pending";
  const edited = !pending && view.editedState && (view.stateEdits || []).length > 0;
  const lines = edits.split("\n").map((l) => l.trim()).filter(Boolean);

  const resume = async ({ formData: value }) => {
    setExtraErrors(undefined);
    setEditError(null);
    try {
      const done = await api.resumeInterrupt(interruptId, value === undefined ? null : value, lines, view.stateVersion);
      setView(done.interrupt);
      if (deliveryPending(done)) setResult({ ok: true, pending: true, text: DELIVERY_PENDING_TEXT });
      else if (done.interrupt.status === "pending" && done.approval)
        // A quorum interrupt: this vote was counted, the interrupt waits for the others.
        setResult({ ok: true, text: `Your vote is counted: ${done.approval.approvals} of ${done.approval.needed} approvals.` });
      else setResult({ ok: true, text: `Resumed ${resolvedByText(done.interrupt.resolvedBy)}.` });
      refresh(); // the settled interrupt as the server now has it (a vote may have completed a quorum)
    } catch (err) {
      if (err.status === 422 && err.body.edit !== undefined) setEditError(err.message);
      else if (err.status === 422) setExtraErrors(errorAt(err.body.path, `the server refused it: ${err.body.reason || err.message}`));
      else setResult({ ok: false, text: err.status === 409 || err.status === 410 ? winnerText(err) : err.message });
      if (err.body && err.body.interrupt) setView(err.body.interrupt);
    }
  };
  const cancel = async (event) => {
    event.preventDefault();
    try {
      const done = await api.cancelInterrupt(interruptId, reason);
      setView(done.interrupt);
      setResult({ ok: true, text: `Cancelled: ${reason}` });
      refresh();
    } catch (err) {
      setResult({ ok: false, text: err.status === 409 || err.status === 410 ? winnerText(err) : err.message });
    }
  };
  return (
    <section aria-labelledby="i-title" className="card">
      <p className="crumbs">
        <a href="#/">Inbox</a> / <a href={`#/run/${encodeURIComponent(view.sessionId)}`}>run {view.sessionId}</a>
        {view.node && ` / node ${view.node}`}
      </p>
      <h1 id="i-title">{view.prompt}</h1>
      <p className="meta" aria-label="Interrupt status">
        {/* one flex item: `.meta`'s gap would otherwise open between the text and the <time> */}
        <span>
          interrupt {view.id} · {view.status}
          {/* A deadline means something only while the interrupt waits; once settled, when and by whom. */}
          {pending && view.expiresAt && <When iso={view.expiresAt} prefix=" · expires " />}
          {!pending && view.resolvedBy && ` · ${resolvedByText(view.resolvedBy)}`}
          {!pending && view.resolvedAt && <When iso={view.resolvedAt} prefix=" · " />}
          {view.outcome === "timed_out_default" && " · nobody answered: the declared default was taken"}
          {view.status === "cancelled" && view.reason && ` · ${view.reason}`}
        </span>
      </p>
      {!pending && view.status !== "cancelled" && view.value !== null && view.value !== undefined && (
        <p aria-label="Resumed with">
          resumed with <code>{typeof view.value === "string" ? view.value : JSON.stringify(view.value)}</code>
        </p>
      )}
      {/* The view does not carry the gated action's onAllow / onDeny: what the shadow policy would have
          decided is shown, not whether a person's resume value agrees with it. */}
      <ShadowLine runId={view.sessionId} interactionId={view.id} decided={null} />
      <ClaimBar view={view} me={me} onClaim={claim} />
      <details className="snapshot">
        {/* Once resumed with edits, the state the workflow went on with, not the snapshot it paused with. */}
        <summary>{edited ? "State after the resume (with the edits)" : "State snapshot"}</summary>
        <pre aria-label="State snapshot">{JSON.stringify((edited ? view.editedState : view.state) || {}, null, 2)}</pre>
      </details>
      {pending && (
        <>
          <Form
            schema={formSchema(view)}
            validator={validator}
            formData={formData}
            onChange={(e) => {
              setFormData(e.formData);
              setExtraErrors(undefined);
            }}
            onSubmit={resume}
            extraErrors={extraErrors}
            showErrorList={false}
            noHtml5Validate
          >
            <StateEdits snapshot={view.state} text={edits} setText={setEdits} serverError={editError} />
            <button type="submit" className="primary">
              Resume
            </button>
          </Form>
          <form className="cancel" onSubmit={cancel}>
            <label htmlFor="cancel-reason">Reason to cancel</label>
            <input id="cancel-reason" value={reason} onChange={(e) => setReason(e.target.value)} />
            <button type="submit" disabled={!reason.trim()}>
              Cancel interrupt
            </button>
          </form>
        </>
      )}
      {result && (
        <p className={resultClass(result)} role={result.ok ? "status" : "alert"}>
          {result.text}
        </p>
      )}
    </section>
  );
}
