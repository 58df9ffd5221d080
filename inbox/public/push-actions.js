// The service worker's logic (sw.js loads this with importScripts; `node --test` loads it with vm), in small
// functions over what they are given, so the tests drive them without a browser. A classic script, not an
// ES module: module service workers are not in every browser the inbox supports.
(function (scope) {
  "use strict";

  // The payload's one-tap answers, as the notification's buttons ({action, title} is all a button holds).
  function notificationActions(payload) {
    return (payload.one_tap || []).map(({ action, title }) => ({ action, title }));
  }

  // What `showNotification` is called with: one notification per item (tagged by it, so a later push or
  // the result replaces it), carrying the whole payload for the click.
  function notificationFor(payload) {
    return {
      title: payload.title || "Baton: an item needs you",
      options: {
        body: payload.body || "",
        data: payload,
        actions: notificationActions(payload),
        tag: payload.interaction_id || undefined,
        icon: "/inbox/icons/icon-192.png",
      },
    };
  }

  // A push whose data is not the JSON of the contract still tells the operator to look.
  function payloadOf(data) {
    try {
      const parsed = data ? data.json() : null;
      if (parsed && typeof parsed === "object") return parsed;
    } catch {
      // not JSON: the fallback below
    }
    return { title: "Baton: an item needs you", body: "", url: "/inbox/", one_tap: [] };
  }

  // The words of a one-tap answer's outcome: a 409 names who answered first (every 409 carries `winner`).
  function resultText(status, body) {
    if (status >= 200 && status < 300) {
      return body && body.delivery === "pending" ? "Answered (delivery pending)" : "Answered";
    }
    const winner = body && body.winner;
    if (status === 409 && winner) return `Already ${winner.status || "answered"} by ${winner.by || "someone"}`;
    if (status === 410 && body && body.reason === "expired") return "Expired: answer it in the inbox";
    if (status === 401 || status === 403) {
      return (body && body.message) || "Sign in to the inbox in this browser to answer from a notification";
    }
    return (body && body.message) || `The answer failed (HTTP ${status})`;
  }

  // How a one-tap request authenticates. With a credential (`auth: "credential"`, the server's payload) it
  // is the signed credential in the body alone: no cookie, no bearer (deployed, the Cognito token lives in
  // the page, never here). Without (an older payload): the inbox session cookie, same origin.
  function requestInit(step) {
    const body = JSON.stringify(step.body);
    if (step.auth === "credential") {
      return { method: step.method || "POST", credentials: "omit", headers: { "Content-Type": "application/json" }, body };
    }
    return {
      method: step.method || "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Baton-Inbox": "1" },
      body,
    };
  }

  // One tap: the contract's request, then the outcome's words.
  async function answerOneTap(fetcher, step) {
    let response;
    try {
      response = await fetcher(step.path, requestInit(step));
    } catch (error) {
      return `Baton could not be reached: ${error.message}`;
    }
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    return resultText(response.status, body);
  }

  async function onPush(event, registration) {
    const { title, options } = notificationFor(payloadOf(event.data));
    await registration.showNotification(title, options);
  }

  // With an action: answer it and say the outcome in a notification of its own (same tag: it replaces
  // the item's); without: focus the inbox on the item, or open it.
  async function onNotificationClick(event, { registration, clients, fetcher }) {
    const payload = (event.notification && event.notification.data) || {};
    const url = payload.url || "/inbox/";
    event.notification.close();
    const step = event.action && (payload.one_tap || []).find((tap) => tap.action === event.action);
    if (step && step.confirm) {
      // A step that asks once more (approving a medium-risk tool call): nothing is sent yet; a notification
      // of its own (same tag) offers that one answer again as "Confirm: ...", and only that tap sends it.
      const confirming = { ...step, action: "confirm", title: `Confirm: ${step.title}`, confirm: false };
      await registration.showNotification(`${step.title}? Tap Confirm to send it`, {
        body: [payload.title, payload.body].filter(Boolean).join(" · "),
        data: { ...payload, one_tap: [confirming] },
        actions: [{ action: confirming.action, title: confirming.title }],
        tag: payload.interaction_id || undefined,
        icon: "/inbox/icons/icon-192.png",
        requireInteraction: true,
      });
      return "confirm";
    }
    if (step) {
      const text = await answerOneTap(fetcher, step);
      await registration.showNotification(text, {
        body: payload.title || "",
        data: { url },
        tag: payload.interaction_id || undefined,
        icon: "/inbox/icons/icon-192.png",
      });
      return text;
    }
    const windows = await clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((client) => new URL(client.url).pathname.startsWith("/inbox/"));
    if (open) {
      await open.focus();
      if (open.navigate) await open.navigate(url).catch(() => null);
      return url;
    }
    await clients.openWindow(url);
    return url;
  }

  scope.BatonPush = {
    notificationActions,
    notificationFor,
    payloadOf,
    resultText,
    requestInit,
    answerOneTap,
    onPush,
    onNotificationClick,
  };
})(self);
