import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { api, deliveryPending, DELIVERY_PENDING_TEXT } from "./api.js";
import { SignIn } from "./SignIn.jsx";
import { resultClass, useInterval } from "./util.js";
import { InlineMarkdown, Markdown, When } from "./text.jsx";

// The diff view and its highlighter load with the first review screen opened, not with the list.
const DiffView = lazy(() => import("./Diff.jsx").then((module) => ({ default: module.DiffView })));

const ACTION_LABELS = {
  approve_merge: "Approve & merge",
  force_merge: "Force-merge",
  request_changes: "Request changes",
};

function Verdict({ verdict }) {
  if (!verdict) return null;
  const blockers = verdict.blockers || [];
  return (
    <section aria-labelledby="verdict-title" className="verdict">
      <h2 id="verdict-title">Verdict</h2>
      <p>
        <strong>{verdict.decision}</strong>
        {typeof verdict.confidence === "number" && ` · confidence ${Math.round(verdict.confidence * 100)}%`}
      </p>
      {verdict.summary && <Markdown text={verdict.summary} className="md verdict-summary" />}
      {blockers.length > 0 ? (
        <ul aria-label="Blockers">
          {blockers.map((b) => (
            <li key={b}>
              <InlineMarkdown text={b} />
            </li>
          ))}
        </ul>
      ) : (
        <p>No blockers.</p>
      )}
    </section>
  );
}

function DiffStats({ diff }) {
  if (!diff) return null;
  const stats = ["files_changed", "insertions", "deletions"].filter((k) => diff[k] !== undefined);
  return (
    <p className="diffstats" aria-label="Diff stats">
      {stats.map((k) => `${diff[k]} ${k.replace("_", " ")}`).join(" · ")}
      {diff.truncated && " · diff truncated"}
    </p>
  );
}

// The steps as the server writes them into a turn's text (domain/companion.py `format_steps`).
const formatSteps = (steps) => steps.map((step, n) => `${n + 1}. ${step}`).join("\n");

// A companion turn's text without the test steps listed in it: they are shown once, above the thread.
// A paragraph left holding only its label ("Test steps:", "The test steps again:") goes with them.
export function withoutSteps(text, steps) {
  if (!steps || !steps.length || !text) return { text, had: false };
  const block = formatSteps(steps);
  let had = false;
  const kept = String(text)
    .split(/\n{2,}/)
    .map((paragraph) => {
      if (!paragraph.includes(block)) return paragraph;
      had = true;
      const rest = paragraph.replace(block, "").trim();
      return /^[^\n]{0,60}:$/.test(rest) ? "" : rest;
    })
    .filter((paragraph) => paragraph.trim());
  return { text: kept.join("\n\n"), had };
}

function Thread({ thread }) {
  const latest = [...thread].reverse().find((t) => t.test_steps && t.test_steps.length);
  const steps = latest ? latest.test_steps : null;
  return (
    <>
      {steps && (
        <section aria-labelledby="steps-title">
          <h2 id="steps-title">Test steps</h2>
          <ol className="steps" aria-label="Test steps">
            {steps.map((step, n) => (
              <li key={n}>
                <InlineMarkdown text={step} />
              </li>
            ))}
          </ol>
        </section>
      )}
      <section aria-labelledby="thread-title">
        <h2 id="thread-title">Thread</h2>
        <ol className="thread" aria-label="Review thread">
          {thread.map((turn) => {
            const shown = turn.role === "companion" ? withoutSteps(turn.text, steps) : { text: turn.text, had: false };
            return (
              <li key={turn.n} className={`turn ${turn.role}`}>
                <p className="who">
                  {turn.role === "companion"
                    ? `companion${turn.is_model ? ` (${turn.model})` : " (offline, not a model)"}`
                    : turn.by || "operator"}{" "}
                  <When iso={turn.at} />
                </p>
                <Markdown text={shown.text} className="text md" />
                {shown.had && <p className="note">The test steps: listed once, above the thread.</p>}
              </li>
            );
          })}
        </ol>
      </section>
    </>
  );
}

// Where an approval merges: the gate's merge_into ("current": the repository's checked-out branch).
export function targetText(mergeInto) {
  if (!mergeInto || mergeInto === "current") return "the checked-out branch";
  return mergeInto === "none" ? "nothing (no merge)" : mergeInto;
}

// The commit the latest review read (what an approval merges), and a warning when the run branch has
// moved past it: a merge is refused then until the companion reviews the new head (issue 28).
function ReviewedCommit({ review, busy, act }) {
  if (!review.reviewed_head) return null;
  const moved = review.run_branch_head && review.run_branch_head !== review.reviewed_head;
  const canReply = (review.allowed_actions || []).includes("reply");
  return (
    <>
      <p className="meta" aria-label="Reviewed commit">
        <span>
          reviewed commit <code>{review.reviewed_head.slice(0, 12)}</code>
        </span>
        <span aria-label="Target branch">
          merges into <code>{targetText(review.merge_into)}</code>
        </span>
        {review.diff_digest && <span>diff sha256 {review.diff_digest.slice(0, 12)}</span>}
      </p>
      {moved && (
        <div className="warning" role="alert" aria-label="Run branch moved">
          <p>
            The run branch moved to <code>{review.run_branch_head.slice(0, 12)}</code> after this review: a merge
            now would take commits nobody reviewed, so it is refused until the companion reviews the new head.
          </p>
          {canReply && (
            <button
              type="button"
              className="primary"
              disabled={busy || review.status !== "pending"}
              onClick={() =>
                act({
                  __review_action: "reply",
                  __review_reply: `The run branch moved to ${review.run_branch_head}: please review the new head.`,
                })
              }
            >
              Review the new head
            </button>
          )}
        </div>
      )}
    </>
  );
}

// Force-merge overrides the companion: a confirm step with a required reason (sent as __review_reason,
// recorded with the decision), never one click.
function ForceConfirm({ busy, onConfirm, onCancel }) {
  const [reason, setReason] = useState("");
  return (
    <div className="confirm" role="group" aria-label="Confirm force-merge">
      <label htmlFor="force-reason">Reason to force-merge (required)</label>
      <textarea id="force-reason" rows={2} value={reason} onChange={(e) => setReason(e.target.value)} />
      <div className="actions">
        <button type="button" className="danger" disabled={busy || !reason.trim()} onClick={() => onConfirm(reason.trim())}>
          Confirm force-merge
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

function Actions({ review, busy, act, result, clearResult, rejected }) {
  const [strategy, setStrategy] = useState(review.merge_strategy || "squash");
  const [message, setMessage] = useState("");
  const [reply, setReply] = useState("");
  const [confirming, setConfirming] = useState(false);
  const allowed = review.allowed_actions || [];
  const open = review.status === "pending";
  // A run branch that moved past the reviewed commit: the server refuses a merge until a new review turn.
  const moved = Boolean(review.run_branch_head && review.run_branch_head !== review.reviewed_head);
  // With blockers the server does not offer approve_merge: requesting changes is the primary action.
  const primary = allowed.includes("approve_merge") ? "approve_merge" : "request_changes";
  const extra = () => ({
    __review_merge_strategy: strategy,
    ...(message.trim() ? { __review_message: message.trim() } : {}),
    // The head this screen showed: the server refuses the merge if the review has moved on since.
    ...(review.reviewed_head ? { __review_head: review.reviewed_head } : {}),
  });
  const click = (action) => {
    if (action === "force_merge") {
      clearResult(); // opening the confirm is a new action: the last one's status line no longer applies
      return setConfirming(true);
    }
    const answers = { __review_action: action, ...(action === "request_changes" ? {} : extra()) };
    if (action === "request_changes" && message.trim()) answers.__review_message = message.trim();
    return act(answers);
  };
  // A merge the guard rejected is the latest word: the earlier "Sent" is not shown beside it.
  const shown = result && !(result.ok && rejected) ? result : null;
  return (
    <>
      {allowed.includes("reply") && (
        <form
          className="reply"
          onSubmit={(e) => {
            e.preventDefault();
            act({ __review_action: "reply", __review_reply: reply.trim() }).then((ok) => ok && setReply(""));
          }}
        >
          <label htmlFor="reply">Reply to the companion</label>
          <textarea id="reply" rows={2} value={reply} onChange={(e) => setReply(e.target.value)} />
          <button type="submit" disabled={!open || busy || !reply.trim()}>
            Send reply
          </button>
        </form>
      )}
      <fieldset className="merge">
        <legend>Merge</legend>
        <label htmlFor="strategy">Strategy</label>
        <select id="strategy" value={strategy} onChange={(e) => setStrategy(e.target.value)}>
          <option value="squash">squash</option>
          <option value="merge">merge (fast-forward)</option>
        </select>
        <label htmlFor="squash-message">Squash commit message or feedback (optional)</label>
        <textarea id="squash-message" rows={2} value={message} onChange={(e) => setMessage(e.target.value)} />
        <div className="actions">
          {Object.entries(ACTION_LABELS)
            .filter(([action]) => allowed.includes(action))
            .map(([action, label]) => (
              <button
                type="button"
                key={action}
                className={action === primary ? "primary" : ""}
                disabled={
                  !open || busy || (confirming && action === "force_merge") || (moved && action !== "request_changes")
                }
                onClick={() => click(action)}
              >
                {label}
              </button>
            ))}
        </div>
        {confirming && open && !moved && allowed.includes("force_merge") && (
          <ForceConfirm
            busy={busy}
            onCancel={() => setConfirming(false)}
            onConfirm={(reason) =>
              act({ __review_action: "force_merge", __review_reason: reason, ...extra() }).then(
                (ok) => ok && setConfirming(false),
              )
            }
          />
        )}
        {/* Right beside the buttons (on a phone too): why the last merge did not land, and what the
            last action got, so the operator sees the guard's reason where the next click is. */}
        {rejected && (
          <p className="error" role="alert" aria-label="Why the last merge did not land">
            {rejected}
          </p>
        )}
        {shown && (
          <p className={resultClass(shown)} role={shown.ok ? "status" : "alert"}>
            {shown.text}
          </p>
        )}
      </fieldset>
    </>
  );
}

export function ReviewScreen({ runId }) {
  const [review, setReview] = useState(null);
  const [run, setRun] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const refresh = useCallback(async () => {
    try {
      const [r, summary] = await Promise.all([api.review(runId), api.run(runId)]);
      setReview(r);
      setRun(summary);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [runId]);
  useEffect(() => {
    refresh();
  }, [refresh]);
  useInterval(refresh, 1500);
  // The diff is read again only when what it is the diff of may have changed: a new turn (a reply read
  // the branch again), a new head, another round; not on every poll (it can be 60 kB).
  const [diff, setDiff] = useState(null);
  const [diffError, setDiffError] = useState(null);
  const diffKey = review
    ? [review.interaction_id, review.reviewed_head, review.run_branch_head, (review.thread || []).length].join("|")
    : null;
  useEffect(() => {
    if (!diffKey) return undefined;
    let live = true;
    api
      .reviewDiff(runId, review.gate)
      .then((d) => live && (setDiff(d), setDiffError(null)))
      .catch((err) => live && setDiffError(err));
    return () => {
      live = false;
    };
  }, [runId, diffKey]); // diffKey names all the review fields the read depends on

  if (error && error.status === 401) return <SignIn />;
  if (!review) return error ? <p className="error" role="alert">{error.message}</p> : <p role="status">Loading…</p>;

  const act = async (answers) => {
    setBusy(true);
    setResult(null);
    try {
      const done = await api.resumeRun(runId, answers, review.gate);
      const pinned = done.reviewed_head ? ` of ${done.reviewed_head.slice(0, 12)}` : "";
      if (deliveryPending(done)) setResult({ ok: true, pending: true, text: DELIVERY_PENDING_TEXT });
      else setResult({ ok: true, text: `Sent: ${done.action}${done.action.endsWith("_merge") ? pinned : ""}.` });
      await refresh();
      return true;
    } catch (err) {
      // The guard's refusal (e.g. blockers need force_merge) is shown; the buttons stay usable.
      setResult({ ok: false, text: err.message });
      return false;
    } finally {
      setBusy(false);
    }
  };
  const merge = review.merge || {};
  return (
    <section aria-labelledby="r-title" className="card">
      <p className="crumbs">
        <a href="#/">Inbox</a> / <a href={`#/run/${encodeURIComponent(runId)}`}>run {runId}</a> / gate {review.gate}
      </p>
      <h1 id="r-title">
        Review {review.run_branch ? `of ${review.run_branch} → ${targetText(review.merge_into)}` : ""}
      </h1>
      <p className="meta" role="status" aria-label="Review status">
        review {review.status} · run {run ? run.status : "?"}
        {merge.merge_status && ` · merge ${merge.merge_status}`}
        {merge.final_commit && ` · ${merge.final_commit.slice(0, 12)} on ${merge.merged_into || merge.final_branch}`}
        {` · turns ${review.turns_used}/${review.max_turns}`}
      </p>
      {review.review_url && (
        <p>
          <a href={review.review_url} target="_blank" rel="noreferrer">
            Open review environment
          </a>
        </p>
      )}
      {(review.warnings || []).map((w) => (
        <p key={w} className="warning">
          {w}
        </p>
      ))}
      <ReviewedCommit review={review} busy={busy} act={act} />
      <DiffStats diff={review.diff} />
      <Verdict verdict={review.verdict} />
      <Thread thread={review.thread || []} />
      <Suspense fallback={<p role="status">Loading the diff…</p>}>
        <DiffView
          diff={diff}
          error={diffError}
          moved={Boolean(review.run_branch_head && review.reviewed_head && review.run_branch_head !== review.reviewed_head)}
        />
      </Suspense>
      <Actions
        review={review}
        busy={busy}
        act={act}
        result={result}
        clearResult={() => setResult(null)}
        rejected={review.status === "pending" ? review.reason : null}
      />
    </section>
  );
}
