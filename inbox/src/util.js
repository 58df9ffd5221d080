// Small helpers shared by the screens.
import { useEffect, useRef } from "react";

// A lease's end as HH:MM (the browser's local time): "claimed by X until 14:05".
export function until(iso) {
  const at = iso ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime())) return "?";
  return at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
}

// A moment in words from now, for a deadline: "in 4 min", "in 2 h 5 min", "3 min ago". The ISO string
// goes in the element's title (a tooltip), as <When> does.
export function relative(iso, now = Date.now()) {
  const at = iso ? new Date(iso).getTime() : NaN;
  if (Number.isNaN(at)) return "?";
  const words = span(Math.abs(at - now) / 1000);
  return at > now ? `in ${words}` : `${words} ago`; // this very moment is past, never "in 0 s"
}

// A length of time in words: "45 s", "4 min", "2 h 5 min", "3 d".
export function span(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
}

export function ago(seconds) {
  const s = Math.max(0, Math.round(seconds || 0));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d`;
}

export function show(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

// The hash route of an inbox item's own screen.
export function itemHref(item) {
  if (item.kind === "interrupt") return `#/interrupt/${encodeURIComponent(item.id)}`;
  if (item.kind === "review") return `#/review/${encodeURIComponent(item.run_id)}`;
  if (item.kind === "tool_approval") return `#/tool/${encodeURIComponent(item.run_id)}/${encodeURIComponent(item.id)}`;
  if (item.kind === "await") return `#/run/${encodeURIComponent(item.run_id)}`;
  return `#/question/${encodeURIComponent(item.run_id)}/${encodeURIComponent(item.id)}`;
}

// What settled an item that left the list, read from its run's events ("answered by X with Y").
export function settledBy(events, id) {
  for (const event of [...events].reverse()) {
    const data = event.data || {};
    // A default taken at the deadline is nobody's answer: said so, never shown as someone's.
    if (data.interaction_id === id && event.type === "timed_out_default")
      return `not answered: the declared default ${show(data.default)} was taken at the deadline`;
    if (data.interaction_id !== id || !data.by) continue;
    if (event.type === "interaction_answered")
      return `answered by ${data.by}` + (data.answer_text ? ` with ${data.answer_text}` : "");
    if (event.type === "interrupt_resumed") return `resumed by ${data.by}`;
    if (event.type === "interrupt_cancelled") return `cancelled by ${data.by}: ${data.reason}`;
  }
  return null;
}

export function useInterval(callback, ms) {
  const saved = useRef(callback);
  useEffect(() => {
    saved.current = callback;
  }, [callback]);
  useEffect(() => {
    const timer = setInterval(() => saved.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

// The class of an action's status line: a stored answer whose delivery is pending is neither green nor red.
export function resultClass(result) {
  if (result.pending) return "pending";
  return result.ok ? "ok" : "error";
}
