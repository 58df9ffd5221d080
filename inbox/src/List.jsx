import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, winnerText } from "./api.js";
import { ago, itemHref, settledBy, show, until, useInterval } from "./util.js";
import { SignIn } from "./SignIn.jsx";
import { BULK_KINDS, BulkBar, BulkPreview, itemName } from "./Triage.jsx";
import { Arguments, toolCallOf } from "./ToolArguments.jsx";

const POLL_MS = 2000; // a new item shows, and a settled one leaves, within 5 s
const PAGE = 50;
const KINDS = ["question", "ask", "await", "interrupt", "review", "tool_approval"];

function blocksText(blocks) {
  if (!blocks) return "";
  if (typeof blocks === "string") return blocks;
  const parts = [];
  if (blocks.gate) parts.push(`gate ${blocks.gate}`);
  if (blocks.run || blocks.run_id) parts.push(`run ${blocks.run || blocks.run_id}`);
  return parts.join(", ") || show(blocks);
}

// The filters beyond the search, and how many are set (the order is not a filter).
const FILTER_KEYS = ["kind", "run", "node", "claimed", "min_age_s"];

function Filters({ filters, setFilters, search, setSearch, searchRef }) {
  const [open, setOpen] = useState(false);
  const set = (key) => (event) => setFilters({ ...filters, [key]: event.target.value });
  const active = FILTER_KEYS.filter((key) => filters[key]).length;
  // Esc leaves a field (the search above all): the single-key shortcuts work again at once.
  const leave = (event) => {
    if (event.key === "Escape" && event.target.matches("input, select")) event.target.blur();
  };
  return (
    <form
      className={`filters${open ? " open" : ""}`}
      role="search"
      aria-label="Filter the inbox"
      onSubmit={(e) => e.preventDefault()}
      onKeyDown={leave}
    >
      <input
        ref={searchRef}
        type="search"
        placeholder="Search prompts, runs, nodes"
        aria-label="Search"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      {/* On a phone the filters fold behind this one button (CSS shows it there only), so the first
          screen is the items, not the form. */}
      <button
        type="button"
        className="filters-toggle"
        aria-expanded={open}
        aria-controls="filter-fields"
        onClick={() => setOpen((was) => !was)}
      >
        Filters{active > 0 ? ` (${active})` : ""}
      </button>
      <div id="filter-fields" className="filter-fields">
        <select aria-label="Filter by kind" value={filters.kind} onChange={set("kind")}>
          <option value="">every kind</option>
          {KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
        <input aria-label="Filter by run" placeholder="run id" value={filters.run} onChange={set("run")} />
        <input aria-label="Filter by node" placeholder="node" value={filters.node} onChange={set("node")} />
        <select aria-label="Filter by claim" value={filters.claimed} onChange={set("claimed")}>
          <option value="">claimed or not</option>
          <option value="me">claimed by me</option>
          <option value="unclaimed">unclaimed</option>
        </select>
        <select aria-label="Filter by age" value={filters.min_age_s} onChange={set("min_age_s")}>
          <option value="">any age</option>
          <option value="60">older than 1 min</option>
          <option value="600">older than 10 min</option>
          <option value="3600">older than 1 h</option>
        </select>
        <select aria-label="Order" value={filters.order} onChange={set("order")}>
          <option value="newest">newest first</option>
          <option value="oldest">oldest first</option>
        </select>
      </div>
    </form>
  );
}

function ItemRow({ item, focused, selected, onFocus, onSelect, onAnswer, outcome }) {
  const ref = useRef(null);
  useEffect(() => {
    // The focus follows j/k within the list, and lands on a list that shows up while nothing has it; it
    // never leaves what the operator is in elsewhere. A row that mounts while they type in a filter must
    // not take their next keys: "a" or "r" on a row answers it.
    const active = document.activeElement;
    const idle = !active || active === document.body || (ref.current && ref.current.parentElement.contains(active));
    if (focused && ref.current && !ref.current.contains(active) && idle) ref.current.focus();
  }, [focused]);
  const question = item.kind === "question";
  // A tool approval's prompt ends with its arguments as JSON: the row's title is the sentence before them,
  // and the arguments follow as a command and a small key/value tree (cut JSON: one line of its text).
  const call = item.kind === "tool_approval" ? toolCallOf(item) : null;
  const title = (call && call.asked) || item.title || item.prompt;
  return (
    <li
      ref={ref}
      tabIndex={focused ? 0 : -1}
      className={`item${focused ? " focused" : ""}${item.fresh ? " fresh" : ""}`}
      aria-current={focused ? "true" : undefined}
      aria-label={`${item.kind}: ${title}`}
      data-item-id={item.id}
      onFocus={onFocus}
    >
      <div className="item-head">
        {BULK_KINDS.includes(item.kind) && (
          <input
            type="checkbox"
            checked={selected}
            onChange={onSelect}
            aria-label={question ? `Select question: ${item.prompt}` : `Select tool call: ${itemName(item)}`}
          />
        )}
        <span className={`kind kind-${item.kind}`}>{item.kind}</span>
        <a className="prompt" href={itemHref(item)}>
          {title || "(no prompt)"}
        </a>
      </div>
      {call && call.args && (
        <div className="tool-args">
          <Arguments args={call.args} compact label={`for ${call.tool}`} />
        </div>
      )}
      {call && !call.args && call.raw && (
        <code className="tool-args raw" title={call.raw}>
          {call.raw.split(/\s+/).join(" ")}
        </code>
      )}
      <div className="meta">
        <a href={`#/run/${encodeURIComponent(item.run_id)}`} aria-label={`Run ${item.run_id}`}>
          {item.run_id}
        </a>
        <span>node {item.node}</span>
        <span>waited {ago(item.waited_s)}</span>
        {item.claimed_by && (
          <span className="claim">
            claimed by {item.claimed_by} until {until(item.lease_expires_at)}
          </span>
        )}
        {item.blocks && item.blocks.gate && <span>blocks {blocksText(item.blocks)}</span>}
      </div>
      {question && item.options && item.options.length > 0 && (
        <div className="options" role="group" aria-label={`Answers to: ${item.prompt}`}>
          {item.options.map((option) => (
            <button type="button" key={option} onClick={() => onAnswer(item, option)}>
              {option}
            </button>
          ))}
        </div>
      )}
      {outcome && (
        <p className={outcome.ok ? "ok" : "error"} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
        </p>
      )}
    </li>
  );
}

// A filtered page (a claim filter, a kind within a node) reads at most READ_BUDGET items and may come back
// short, even empty, with a `next` past what it read: a load follows `next` while it holds fewer than it
// wants, up to FOLLOWS requests (the server's FILTERED_READ_BUDGET, baton/pending_query.py).
const FOLLOWS = 4;
const READ_BUDGET = 500;
const MAX_PAGE = 200; // the API's largest page

// The items from `cursor` (null: the top) until `want` are held, the listing ends or `requests` were made.
async function readPages(params, cursor, want, requests) {
  const items = [];
  let next = cursor;
  let made = 0;
  do {
    const data = await api.inbox({ ...params, limit: Math.min(MAX_PAGE, want - items.length), next });
    items.push(...(data.items || []));
    next = data.next || null;
    made += 1;
  } while (next && items.length < want && made < requests);
  return { items, next, made };
}

function useInbox(filters) {
  const [items, setItems] = useState(null);
  const [error, setError] = useState(null);
  const [next, setNext] = useState(null);
  const [requests, setRequests] = useState(0); // what the shown listing took: "none found in the first N"
  const [settled, setSettled] = useState([]);
  // How deep the listing reaches (Load more deepens it): a poll reads it again from the top, as deep.
  const reach = useRef({ want: PAGE, requests: FOLLOWS });
  const known = useRef(null);
  const started = useRef(0); // the reads in order: one that started before the shown one is dropped
  const shownRead = useRef(0);
  const more = useRef(false);
  const key = JSON.stringify(filters);
  const shownKey = useRef(key);
  useEffect(() => {
    shownKey.current = key;
    known.current = null;
    reach.current = { want: PAGE, requests: FOLLOWS };
    setItems(null);
    setNext(null);
    setSettled([]);
  }, [key]);
  // The read that started last and ended shows; the filters changed while it was on its way: it is
  // another listing's, and what it lacks was filtered out, not settled (not "Just settled").
  const current = (read) => shownKey.current === key && read > shownRead.current;
  const load = useCallback(async () => {
    const read = ++started.current;
    let page;
    try {
      page = await readPages(filters, null, reach.current.want, reach.current.requests);
    } catch (err) {
      if (shownKey.current === key) setError(err);
      return;
    }
    if (!current(read)) return;
    shownRead.current = read;
    setError(null);
    const fresh = page.items;
    const before = known.current;
    const ids = new Set(fresh.map((i) => i.id));
    setItems(fresh.map((i) => ({ ...i, fresh: before !== null && !before.has(i.id) })));
    setNext(page.next);
    setRequests(page.made);
    if (before) {
      const gone = [...before.values()].filter((i) => !ids.has(i.id));
      gone.forEach(async (item) => {
        let text = "no longer waiting";
        try {
          text = settledBy((await api.events(item.run_id)).events || [], item.id) || text;
        } catch {
          /* the run's events could not be read: say only that it left */
        }
        if (shownKey.current !== key) return; // the filters changed while its events were read
        setSettled((list) => [{ ...item, text, at: Date.now() }, ...list.filter((s) => s.id !== item.id)].slice(0, 20));
      });
    }
    known.current = new Map(fresh.map((i) => [i.id, i]));
  }, [key]); // eslint-disable-line react-hooks/exhaustive-deps
  // Load more continues from the shown listing's cursor and appends (not fresh arrivals: asked for).
  const loadMore = useCallback(async () => {
    if (!next || more.current) return;
    more.current = true;
    // Deepened first: a poll that starts while this reads reads as deep, so it drops nothing appended.
    reach.current = { want: reach.current.want + PAGE, requests: reach.current.requests + FOLLOWS };
    const read = ++started.current;
    try {
      const page = await readPages(filters, next, PAGE, FOLLOWS);
      if (!current(read)) return;
      shownRead.current = read;
      setError(null);
      const had = known.current || new Map();
      const added = page.items.filter((i) => !had.has(i.id));
      known.current = new Map([...had, ...added.map((i) => [i.id, i])]);
      setItems((shown) => [...(shown || []), ...added.map((i) => ({ ...i, fresh: false }))]);
      setNext(page.next);
      setRequests((made) => made + page.made);
    } catch (err) {
      if (shownKey.current === key) setError(err);
    } finally {
      more.current = false;
    }
  }, [key, next]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    load();
  }, [load]);
  useInterval(load, POLL_MS);
  return { items, error, next, read: requests * READ_BUDGET, settled, loadMore, reload: load };
}

function matches(item, search) {
  if (!search) return true;
  const text = `${item.title || ""} ${item.prompt} ${item.run_id} ${item.node} ${item.kind} ${item.claimed_by || ""}`.toLowerCase();
  return search.toLowerCase().split(/\s+/).every((word) => text.includes(word));
}

export function InboxList({ shortcuts }) {
  const [filters, setFilters] = useState({ kind: "", run: "", node: "", claimed: "", min_age_s: "", order: "newest" });
  const [search, setSearch] = useState("");
  const { items, error, next, read, settled, loadMore, reload } = useInbox(filters);
  const [focusAt, setFocus] = useState(0);
  const [selected, setSelected] = useState(new Set());
  const [outcomes, setOutcomes] = useState({});
  const [preview, setPreview] = useState(null); // { action, items, from }: the bulk action being confirmed
  const searchRef = useRef(null);
  const bulkRef = useRef(null);
  const shown = useMemo(() => (items || []).filter((item) => matches(item, search)), [items, search]);
  const focus = Math.max(0, Math.min(focusAt, shown.length - 1)); // the list may have shrunk under the focus

  const answer = useCallback(
    async (item, value) => {
      try {
        await api.answer(item.run_id, item.id, value);
        const said = typeof value === "string" ? `answered with ${value}` : value.decision === "approve" ? "approved" : `denied: ${value.reason}`;
        setOutcomes((o) => ({ ...o, [item.id]: { ok: true, text: said } }));
        reload();
      } catch (err) {
        const text = err.status === 409 ? winnerText(err) : err.message;
        setOutcomes((o) => ({ ...o, [item.id]: { ok: false, text } }));
      }
    },
    [reload],
  );
  const toggle = (id) =>
    setSelected((s) => {
      const copy = new Set(s);
      if (copy.has(id)) copy.delete(id);
      else copy.add(id);
      return copy;
    });

  useEffect(() => {
    if (!shortcuts) return undefined;
    const onKey = (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.target.closest("input, textarea, select, [contenteditable], [role=dialog]")) return;
      const item = shown[focus];
      if (event.key === "j") setFocus((f) => Math.min(f + 1, shown.length - 1));
      else if (event.key === "k") setFocus((f) => Math.max(f - 1, 0));
      else if (event.key === "/") {
        event.preventDefault();
        searchRef.current && searchRef.current.focus();
      } else if (!item) return;
      else if (event.key === "Enter" && event.target.tagName !== "A" && event.target.tagName !== "BUTTON")
        window.location.hash = itemHref(item);
      else if ((event.key === "a" || event.key === "r") && item.kind === "question" && item.options) {
        const option = item.options[event.key === "a" ? 0 : 1];
        if (option !== undefined) answer(item, option);
      } else if (event.key === "a" && item.kind === "tool_approval") answer(item, { decision: "approve" });
      else if (event.key === "r" && item.kind === "tool_approval") {
        // A deny needs its reason (the agent reads it): asked for here, nothing sent without one.
        const reason = (window.prompt(`Reason to deny ${item.title || "the tool call"} (the agent reads it):`) || "").trim();
        if (reason) answer(item, { decision: "deny", reason });
      } else if (event.key === "x" && BULK_KINDS.includes(item.kind)) toggle(item.id);
      else if (event.key === "b" && bulkRef.current) {
        const first = bulkRef.current.querySelector("button");
        if (first) first.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shortcuts, shown, focus, answer]);

  if (error && error.status === 401) return <SignIn />;
  return (
    <section aria-labelledby="list-title">
      <h1 id="list-title">Waiting for a person</h1>
      <Filters filters={filters} setFilters={setFilters} search={search} setSearch={setSearch} searchRef={searchRef} />
      {error && (
        <p className="error" role="alert">
          The inbox could not be read: {error.message}
        </p>
      )}
      {selected.size > 0 && (
        <BulkBar
          chosen={shown.filter((item) => selected.has(item.id))}
          barRef={bulkRef}
          onPreview={(action) =>
            setPreview({ action, items: shown.filter((item) => selected.has(item.id)), from: document.activeElement })
          }
        />
      )}
      {preview && (
        <BulkPreview
          items={preview.items}
          action={preview.action}
          onSent={(results) => {
            setOutcomes((o) => ({ ...o, ...results }));
            setSelected(new Set());
            reload();
          }}
          onClose={() => {
            // Back where the operator was: the action's button, else (the bar left with the selection) the list.
            const { from } = preview;
            setPreview(null);
            setTimeout(() => {
              if (from && from.isConnected) from.focus();
              else document.querySelector("li.item[tabindex='0']")?.focus();
            });
          }}
        />
      )}
      {items === null && !error && <p role="status">Loading…</p>}
      {items !== null && items.length === 0 && next && (
        <p role="status">None found in the first {read.toLocaleString("en")} items read.</p>
      )}
      {items !== null && shown.length === 0 && !(items.length === 0 && next) && (
        <p role="status">Nothing is waiting for a person.</p>
      )}
      <ul className="items" aria-label="Pending items" aria-live="polite" aria-relevant="additions">
        {shown.map((item, n) => (
          <ItemRow
            key={item.id}
            item={item}
            focused={n === focus}
            selected={selected.has(item.id)}
            onFocus={() => setFocus(n)}
            onSelect={() => toggle(item.id)}
            onAnswer={answer}
            outcome={outcomes[item.id]}
          />
        ))}
      </ul>
      {next && (
        <button type="button" onClick={loadMore}>
          Load more
        </button>
      )}
      {settled.length > 0 && (
        <section aria-labelledby="settled-title" className="settled">
          <h2 id="settled-title">Just settled</h2>
          <ul aria-live="polite">
            {settled.map((item) => (
              <li key={item.id} data-settled-id={item.id}>
                <span className={`kind kind-${item.kind}`}>{item.kind}</span> {itemName(item)} — {item.text}
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}
