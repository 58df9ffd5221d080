// The service worker's logic (public/push-actions.js) with node's own runner: `npm test`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import vm from "node:vm";

globalThis.self = globalThis; // what the classic script hangs its functions on, as in a worker
vm.runInThisContext(readFileSync(new URL("../public/push-actions.js", import.meta.url), "utf8"));
const { notificationFor, payloadOf, resultText, answerOneTap, onPush, onNotificationClick } = globalThis.BatonPush;

const answerPath = "/api/runs/run-1/interactions/i-1/answer";
const payload = {
  title: "Approve: rm -rf build/",
  body: "tool approval, escalated to you",
  url: "/inbox/#/tool/run-1/i-1",
  run_id: "run-1",
  interaction_id: "i-1",
  kind: "tool_approval",
  reason: "escalated",
  one_tap: [
    { action: "approve", title: "Approve", method: "POST", path: answerPath, body: { answer: { decision: "approve" } } },
    { action: "deny", title: "Deny", method: "POST", path: answerPath, body: { answer: { decision: "deny" } } },
  ],
};

function response(status, body) {
  return { status, json: async () => body };
}

function recorder() {
  const shown = [];
  return { shown, showNotification: async (title, options) => shown.push({ title, options }) };
}

test("a push shows the item's title, body, tag and one-tap actions (only action and title)", async () => {
  const registration = recorder();
  await onPush({ data: { json: () => payload } }, registration);
  assert.equal(registration.shown.length, 1);
  const [{ title, options }] = registration.shown;
  assert.equal(title, payload.title);
  assert.equal(options.body, payload.body);
  assert.equal(options.tag, "i-1");
  assert.deepEqual(options.actions, [
    { action: "approve", title: "Approve" },
    { action: "deny", title: "Deny" },
  ]);
  assert.equal(options.data, payload);
});

test("an item that needs its page has no actions", () => {
  assert.deepEqual(notificationFor({ ...payload, one_tap: [] }).options.actions, []);
});

test("a push that is not the contract's JSON still says an item needs you", () => {
  const shown = payloadOf({
    json: () => {
      throw new SyntaxError("not json");
    },
  });
  assert.equal(shown.url, "/inbox/");
  assert.equal(notificationFor(shown).title, "Baton: an item needs you");
  assert.equal(payloadOf(null).url, "/inbox/");
});

test("a one-tap answer is the contract's request: same-origin cookie, JSON, the inbox header", async () => {
  const calls = [];
  const fetcher = async (path, init) => {
    calls.push({ path, init });
    return response(200, { status: "answered" });
  };
  assert.equal(await answerOneTap(fetcher, payload.one_tap[0]), "Answered");
  assert.deepEqual(calls, [
    {
      path: answerPath,
      init: {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Baton-Inbox": "1" },
        body: JSON.stringify({ answer: { decision: "approve" } }),
      },
    },
  ]);
});

test("a credential's one tap sends only its credential and answer: no cookie, no bearer, no inbox header", async () => {
  const calls = [];
  const fetcher = async (path, init) => {
    calls.push({ path, init });
    return response(200, { status: "answered" });
  };
  const step = {
    action: "approve",
    title: "Approve",
    method: "POST",
    path: "/api/push/answer",
    body: { credential: "claims.mac", answer: { decision: "approve" } },
    auth: "credential",
  };
  assert.equal(await answerOneTap(fetcher, step), "Answered");
  assert.deepEqual(calls, [
    {
      path: "/api/push/answer",
      init: {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ credential: "claims.mac", answer: { decision: "approve" } }),
      },
    },
  ]);
  const expired = async () => response(410, { error: "gone", reason: "expired", message: "This notification's answer has expired" });
  assert.equal(await answerOneTap(expired, step), "Expired: answer it in the inbox");
  const replayed = async () =>
    response(409, { error: "conflict", reason: "used", winner: { status: "answered", by: "alice@example.com" } });
  assert.equal(await answerOneTap(replayed, step), "Already answered by alice@example.com");
  const altered = async () => response(403, { error: "forbidden", message: "This one-tap credential was altered" });
  assert.equal(await answerOneTap(altered, step), "This one-tap credential was altered");
});

test("the outcome in words: answered, pending delivery, already answered by, refused, unreachable", async () => {
  assert.equal(resultText(202, { delivery: "pending" }), "Answered (delivery pending)");
  assert.equal(resultText(409, { winner: { status: "answered", by: "alice" } }), "Already answered by alice");
  assert.equal(resultText(409, { winner: { status: "approved", by: "bob" } }), "Already approved by bob");
  assert.equal(resultText(422, { message: "answer is not one of the options" }), "answer is not one of the options");
  assert.equal(resultText(500, null), "The answer failed (HTTP 500)");
  assert.match(resultText(401, null), /Sign in/);
  const offline = async () => {
    throw new TypeError("Failed to fetch");
  };
  assert.equal(await answerOneTap(offline, payload.one_tap[0]), "Baton could not be reached: Failed to fetch");
});

test("tapping an action answers once; the second tap says who answered first", async () => {
  let answered = null;
  const fetcher = async () => {
    if (answered) return response(409, { error: "conflict", winner: { status: "answered", by: answered } });
    answered = "operator";
    return response(200, {});
  };
  const registration = recorder();
  const closed = [];
  const tap = () =>
    onNotificationClick(
      { action: "approve", notification: { data: payload, close: () => closed.push(true) } },
      { registration, clients: null, fetcher },
    );
  assert.equal(await tap(), "Answered");
  assert.equal(await tap(), "Already answered by operator");
  assert.deepEqual(
    registration.shown.map(({ title, options }) => [title, options.tag, options.data.url]),
    [
      ["Answered", "i-1", payload.url],
      ["Already answered by operator", "i-1", payload.url],
    ],
  );
  assert.equal(closed.length, 2);
});

test("a step that asks once more sends nothing until its Confirm is tapped, then answers once", async () => {
  const sent = [];
  const fetcher = async (path, init) => {
    sent.push([path, JSON.parse(init.body)]);
    return response(200, {});
  };
  const medium = { ...payload, one_tap: [{ ...payload.one_tap[0], confirm: true }, payload.one_tap[1]] };
  const registration = recorder();
  const tap = (data, action) =>
    onNotificationClick({ action, notification: { data, close: () => null } }, { registration, clients: null, fetcher });
  assert.equal(await tap(medium, "approve"), "confirm");
  assert.deepEqual(sent, []);
  const [asked] = registration.shown;
  assert.equal(asked.title, "Approve? Tap Confirm to send it");
  assert.deepEqual(asked.options.actions, [{ action: "confirm", title: "Confirm: Approve" }]);
  assert.equal(asked.options.tag, "i-1");
  assert.equal(await tap(asked.options.data, "confirm"), "Answered");
  assert.deepEqual(sent, [[answerPath, { answer: { decision: "approve" } }]]);
  assert.equal(await tap(medium, "deny"), "Answered"); // a step without `confirm` sends at once
  assert.equal(sent.length, 2);
});

test("a click on the notification itself focuses an open inbox on the item, or opens it", async () => {
  const events = [];
  const inbox = {
    url: "https://baton.example/inbox/#/",
    focus: async () => events.push("focus"),
    navigate: async (url) => events.push(`navigate ${url}`),
  };
  const clients = (windows) => ({
    matchAll: async () => windows,
    openWindow: async (url) => events.push(`open ${url}`),
  });
  const click = { action: "", notification: { data: payload, close: () => null } };
  await onNotificationClick(click, { registration: recorder(), clients: clients([inbox]), fetcher: null });
  assert.deepEqual(events, ["focus", `navigate ${payload.url}`]);
  events.length = 0;
  await onNotificationClick(click, { registration: recorder(), clients: clients([]), fetcher: null });
  assert.deepEqual(events, [`open ${payload.url}`]);
});
