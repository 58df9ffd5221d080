// The inbox is only a client of Baton's public API. Locally the browser is signed in by an HttpOnly
// session cookie (`baton dev` prints a one-time sign-in link) and cookie-authenticated writes carry the
// X-Baton-Inbox header so a cross-site form cannot forge them; deployed, the Cognito ID token (held in
// memory, see auth.js) goes in the Authorization header. No task token ever reaches the page.
import { authHeaders } from "./auth.js";

export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

async function request(method, path, body) {
  const headers = { Accept: "application/json", "X-Baton-Inbox": "1", ...authHeaders() };
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { message: text };
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const enc = encodeURIComponent;
const SHADOW_PAGES = 10; // a shadow decision is looked for in the run's first 2,000 events

function query(params) {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "");
  return pairs.length ? "?" + pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join("&") : "";
}

export const api = {
  me: () => request("GET", "/api/me"),
  away: () => request("GET", "/api/me/away"),
  setAway: (until, delegate) => request("PUT", "/api/me/away", { until, delegate }),
  clearAway: () => request("DELETE", "/api/me/away"),
  inbox: (filters) => request("GET", "/api/inbox" + query(filters)),
  waits: () => request("GET", "/api/stats/waits"),
  run: (runId) => request("GET", `/api/runs/${enc(runId)}`),
  events: (runId, after) => request("GET", `/api/runs/${enc(runId)}/events` + query({ after, limit: 200 })),
  // What a shadow policy would have decided about one interaction (issue 31): its `policy_decided` record
  // with mode "shadow" in the run's events (written at the interaction's creation), or null.
  shadowDecision: async (runId, iid) => {
    let after;
    for (let pages = 0; pages < SHADOW_PAGES; pages += 1) {
      const page = await api.events(runId, after);
      const found = (page.events || []).find(
        (e) => e.type === "policy_decided" && e.data.interaction_id === iid && e.data.mode === "shadow",
      );
      if (found) return found.data;
      if (!page.next) return null;
      after = page.next;
    }
    return null;
  },
  pendingQuestions: (runId) => request("GET", `/api/runs/${enc(runId)}/interactions/pending`),
  // `passkey`: the assertion a high risk approve takes where passkeys are set up (passkeys.js)
  answer: (runId, iid, answer, passkey) =>
    request("POST", `/api/runs/${enc(runId)}/interactions/${enc(iid)}/answer`, passkey ? { answer, passkey } : { answer }),
  resumeRun: (runId, answers, node) => request("POST", `/api/runs/${enc(runId)}/resume`, { answers, node }),
  toolApproval: (runId, iid) => request("GET", `/api/runs/${enc(runId)}/tool-approvals/${enc(iid)}`),
  // Advisory, like an interrupt's: a take-over names the holder it was decided on.
  claimToolApproval: (runId, iid, force, reason, holder) =>
    request(
      "POST",
      `/api/runs/${enc(runId)}/tool-approvals/${enc(iid)}/claim`,
      force ? { force: true, reason, holder } : {},
    ),
  review: (runId) => request("GET", `/api/runs/${enc(runId)}/review`),
  reviewDiff: (runId, gate) => request("GET", `/api/runs/${enc(runId)}/review/diff` + query({ gate })),
  interrupt: (id) => request("GET", `/api/v1/interrupts/${enc(id)}`),
  // A take-over (force) carries its reason: the server records it and refuses one without (422).
  // A take-over names the holder it was decided on: anyone else's claim meanwhile is a 409 naming them.
  claim: (id, force, reason, holder) =>
    request("POST", `/api/v1/interrupts/${enc(id)}/claim`, force ? { force: true, reason, holder } : {}),
  // Bound to the state version the operator saw: a state changed since is a 409 naming the current one.
  resumeInterrupt: (id, input, stateEdits, stateVersion) =>
    request("POST", `/api/v1/interrupts/${enc(id)}/resume`, { input, stateEdits, stateVersion }),
  cancelInterrupt: (id, reason) => request("POST", `/api/v1/interrupts/${enc(id)}/cancel`, { reason }),
  // Web Push: the server's VAPID key (404 when push is not configured) and this operator's subscriptions.
  pushKey: () => request("GET", "/api/push/key"),
  pushSubscriptions: () => request("GET", "/api/me/push-subscriptions"),
  addPushSubscription: (subscription) => request("POST", "/api/me/push-subscriptions", subscription),
  deletePushSubscription: (id) => request("DELETE", `/api/me/push-subscriptions/${enc(id)}`),
  // Passkeys (404 when the server has none configured) and a step-up's challenge for one answer of one item.
  passkeys: () => request("GET", "/api/me/webauthn/credentials"),
  passkeyOptions: () => request("POST", "/api/me/webauthn/register/options"),
  registerPasskey: (credential, name) => request("POST", "/api/me/webauthn/register", { credential, name }),
  deletePasskey: (id) => request("DELETE", `/api/me/webauthn/credentials/${enc(id)}`),
  stepUpOptions: (runId, iid, answer) =>
    request("POST", "/api/me/webauthn/step-up/options", { run_id: runId, interaction_id: iid, answer }),
};

// A 202 with `delivery: "pending"`: the answer is stored but its send to the workflow failed; the
// reconciler delivers it within a minute. Not an error, and not yet "sent" either.
export const deliveryPending = (body) => Boolean(body && body.delivery === "pending");
export const DELIVERY_PENDING_TEXT = "Stored; delivery pending (the workflow will get it within a minute).";

// Ends the local stack's cookie session on the server (deployed, Cognito signs in and there is no logout route).
export async function signOut() {
  const init = { method: "POST", credentials: "same-origin", headers: { "X-Baton-Inbox": "1" } };
  const response = await fetch("/inbox/logout", init);
  if (!response.ok) throw new ApiError(response.status, { message: `sign-out failed: HTTP ${response.status}` });
}

// The one sentence a 409 says: who answered first and with what (every 409 carries the `winner`).
export function winnerText(error) {
  const w = error && error.body && error.body.winner;
  if (!w) return error ? error.message : "";
  const value = typeof w.value === "string" ? w.value : JSON.stringify(w.value);
  if (w.status === "claimed") return `claimed by ${w.by}`;
  if (w.status === "cancelled") return `already cancelled by ${w.by || "someone"} (${value})`;
  return `already ${w.status || "answered"} by ${w.by || "someone"} with ${value}`;
}
