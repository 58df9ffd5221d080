import { useCallback, useEffect, useState } from "react";
import { api } from "./api.js";
import { SignIn } from "./SignIn.jsx";
import { show, useInterval } from "./util.js";

// What one event says, in a line (the payload's keys per type are in layers/baton/python/baton/events.py).
function summary(event) {
  const d = event.data || {};
  const parts = [d.node && `node ${d.node}`, d.kind, d.prompt && `“${d.prompt}”`];
  if (d.by) parts.push(`by ${d.by}`);
  if (d.answer_text || d.answer !== undefined) parts.push(`answer ${d.answer_text || show(d.answer)}`);
  if (d.reason) parts.push(d.reason);
  if (event.type === "timed_out_default") parts.push(`default ${show(d.default)} taken (nobody answered)`);
  if (d.channels) parts.push(`to ${d.channels.join(", ")}`);
  if (d.merge_status) parts.push(`merge ${d.merge_status}`);
  return parts.filter(Boolean).join(" · ");
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
          <li key={event.event_id}>
            <time>{event.at}</time> <strong>{event.type}</strong> <span>{summary(event)}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
