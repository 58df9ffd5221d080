import { useCallback, useEffect, useState } from "react";
import { api } from "./api.js";
import { SignIn } from "./SignIn.jsx";
import { span, useInterval } from "./util.js";
import { When } from "./text.jsx";

// A value in words, never as JSON: a list joined with commas, an object as "key value; key value".
export function plain(value) {
  if (value === null || value === undefined) return "none";
  if (typeof value === "string") return value;
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return value.map(plain).join(", ") || "none";
  const entries = Object.entries(value);
  return entries.length ? entries.map(([k, v]) => `${words(k)} ${plain(v)}`).join("; ") : "none";
}

const words = (key) => key.replace(/_/g, " ");
const LONG = 160; // a field longer than this is cut on the line; the whole is in its tooltip

// The fields a reader looks for first, in this order; the payload's others follow (the keys per type
// are in layers/baton/python/baton/events.py). `by` is the event's "who", shown beside its type.
const FIRST = ["prompt", "node", "gate", "kind", "answer_text", "answer", "decision", "reason", "default"];
// The who is in the head; how a pause was hosted is plumbing, not something a reader decides on.
const HIDDEN = new Set(["by", "async", "hosted"]);

// A duration field in words: "timeout ms 86400000" reads "timeout 1 d".
function duration(key, value) {
  const unit = key.endsWith("_ms") ? 1000 : key.endsWith("_seconds") || key.endsWith("_s") ? 1 : 0;
  if (!unit || typeof value !== "number") return null;
  const label = key.replace(/_(ms|seconds|s)$/, "");
  return { key: label, text: span(value / unit) };
}

export function eventFields(event) {
  const data = event.data || {};
  // The answer in words says it already: its stored value is not repeated beside it.
  const repeated = (k) => k === "answer" && Boolean(data.answer_text);
  const keys = Object.keys(data).filter((k) => !HIDDEN.has(k) && !repeated(k) && data[k] !== undefined && data[k] !== null);
  // Identifiers (long, for matching with logs) come last.
  const rank = (k) => (FIRST.includes(k) ? FIRST.indexOf(k) : k.endsWith("_id") ? FIRST.length + 1 : FIRST.length);
  return keys
    .sort((a, b) => rank(a) - rank(b))
    .map((k) => {
      const timed = duration(k, data[k]);
      const text = timed ? timed.text : plain(data[k]);
      const key = timed ? timed.key : k === "answer_text" ? "answer" : k;
      return { key: words(key), text, short: text.length > LONG ? `${text.slice(0, LONG)}…` : text };
    });
}

function TimelineEvent({ event }) {
  const by = event.data && event.data.by;
  return (
    <li className="event">
      <p className="event-head">
        <strong>{words(event.type)}</strong>
        {by && <span className="event-by"> by {by}</span>} <When iso={event.at} />
      </p>
      <dl className="event-fields">
        {eventFields(event).map((field) => (
          <div key={field.key}>
            <dt>{field.key}</dt>
            <dd title={field.short === field.text ? undefined : field.text}>{field.short}</dd>
          </div>
        ))}
      </dl>
    </li>
  );
}

export function RunScreen({ runId }) {
  const [run, setRun] = useState(null);
  const [events, setEvents] = useState([]);
  const [error, setError] = useState(null);
  const refresh = useCallback(async () => {
    try {
      const [summaryView, page] = await Promise.all([api.run(runId), api.events(runId)]);
      setRun(summaryView);
      setEvents(page.events || []);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [runId]);
  useEffect(() => {
    refresh();
  }, [refresh]);
  useInterval(refresh, 3000);
  if (error && error.status === 401) return <SignIn />;
  if (!run) return error ? <p className="error" role="alert">{error.message}</p> : <p role="status">Loading…</p>;
  return (
    <section aria-labelledby="run-title" className="card">
      <p className="crumbs">
        <a href="#/">Inbox</a> / run {runId}
      </p>
      <h1 id="run-title">Run {runId}</h1>
      <dl className="runinfo">
        <dt>Status</dt>
        <dd aria-label="Run status">{run.status}</dd>
        {run.workflow && (
          <>
            <dt>Workflow</dt>
            <dd>{run.workflow}</dd>
          </>
        )}
        {run.reason && (
          <>
            <dt>Reason</dt>
            <dd>{run.reason}</dd>
          </>
        )}
        {run.merge_status && (
          <>
            <dt>Merge</dt>
            <dd>
              {run.merge_status} {run.final_commit && `${run.final_commit.slice(0, 12)} on ${run.merged_into || run.final_branch}`}
            </dd>
          </>
        )}
        <dt>Interactions</dt>
        <dd>
          {Object.entries(run.interactions || {})
            .map(([k, v]) => `${v} ${k}`)
            .join(", ") || "none"}
        </dd>
      </dl>
      <h2>Timeline</h2>
      <ol className="timeline" aria-label="Event timeline">
        {events.map((event) => (
          <TimelineEvent key={event.event_id} event={event} />
        ))}
      </ol>
    </section>
  );
}
