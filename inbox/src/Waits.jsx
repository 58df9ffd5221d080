import { useCallback, useEffect, useState } from "react";
import { api } from "./api.js";
import { SignIn } from "./SignIn.jsx";
import { itemHref, relative, span, useInterval } from "./util.js";

// How long things wait (GET /api/stats/waits): what is pending now, and how fast people answered over the
// last day and week. Figures only; each oldest item links to its own screen.
const age = (seconds) => (seconds === null || seconds === undefined ? "–" : span(seconds));

// A read that stopped at its page limit (the server never reads everything): what the figures cover.
function Sampled({ read, text }) {
  if (!read.truncated) return null;
  return (
    <p className="warning" role="note">
      {text(read.sampled)}
    </p>
  );
}

function PendingTable({ caption, label, rows }) {
  return (
    <table className="figures">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{label}</th>
          <th scope="col" className="num">Pending</th>
          <th scope="col" className="num">Oldest</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.name}>
            <th scope="row">{row.name}</th>
            <td className="num">{row.pending}</td>
            <td className="num">{age(row.oldest_age_s)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function AnswerTable({ answers }) {
  return (
    <table className="figures answers" aria-label="Answer times">
      <caption>Answered and deadlines</caption>
      <thead>
        <tr>
          <th scope="col">Last</th>
          <th scope="col" className="num">Answered</th>
          <th scope="col" className="num">p50</th>
          <th scope="col" className="num">p95</th>
          <th scope="col" className="num">Met</th>
          <th scope="col" className="num">Missed</th>
        </tr>
      </thead>
      <tbody>
        {answers.windows.map((w) => (
          <tr key={w.window}>
            <th scope="row">{w.window}</th>
            <td className="num">{w.answered}</td>
            <td className="num">{age(w.p50_s)}</td>
            <td className="num">{age(w.p95_s)}</td>
            <td className="num">{w.deadlines_met}</td>
            <td className={w.deadlines_missed ? "num error" : "num"}>{w.deadlines_missed}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Oldest({ items }) {
  if (!items.length) return <p>Nothing is waiting.</p>;
  return (
    <ol className="oldest" aria-label="Oldest pending items">
      {items.map((item) => (
        <li key={item.id}>
          <span className={`kind kind-${item.kind}`}>{item.kind.replace("_", " ")}</span>{" "}
          <a href={itemHref(item)}>{item.title}</a>
          <span className="meta">
            <span>waiting {span(item.age_s)}</span>
            <span>
              run <a href={`#/run/${encodeURIComponent(item.run_id)}`}>{item.run_id}</a>
            </span>
            {item.expires_at && <span title={item.expires_at}>deadline {relative(item.expires_at)}</span>}
          </span>
        </li>
      ))}
    </ol>
  );
}

export function WaitsScreen() {
  const [stats, setStats] = useState(null);
  const [error, setError] = useState(null);
  const refresh = useCallback(async () => {
    try {
      setStats(await api.waits());
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, []);
  useEffect(() => {
    refresh();
  }, [refresh]);
  useInterval(refresh, 10000);
  if (error && error.status === 401) return <SignIn />;
  if (!stats) return error ? <p className="error" role="alert">{error.message}</p> : <p role="status">Loading…</p>;
  const { pending, answers } = stats;
  const kinds = pending.by_kind.map((k) => ({ name: k.kind.replace("_", " "), ...k }));
  const workflows = pending.by_workflow.map((w) => ({ name: w.workflow || "(no workflow)", ...w }));
  return (
    <section aria-labelledby="waits-title" className="card waits">
      <p className="crumbs">
        <a href="#/">Inbox</a> / waits
      </p>
      <h1 id="waits-title">How long things wait</h1>
      {error && <p className="error" role="alert">{error.message}</p>}
      <h2>Pending now: {pending.count}</h2>
      <Sampled read={pending} text={(n) => `By workflow: the oldest ${n} pending items only (the counts by kind are all).`} />
      <div className="figure-grid">
        <PendingTable caption="By kind" label="Kind" rows={kinds} />
        <PendingTable caption="By workflow" label="Workflow" rows={workflows} />
      </div>
      <h2>Oldest</h2>
      <Oldest items={pending.oldest} />
      <h2>Answer times</h2>
      <Sampled read={answers} text={(n) => `From ${n} settled items read (a page per kind): a sample, not all.`} />
      <AnswerTable answers={answers} />
      <p className="meta">As of {new Date(stats.as_of).toLocaleString()}; p50 and p95 from asked to answered by a person.</p>
    </section>
  );
}
