// The header's "Notifications" control: Web Push for this browser. On: the permission, the service worker
// (scope /inbox/), a push subscription with the server's VAPID key, saved for this operator; off: the
// subscription dropped here and deleted on the server. The state is this browser's, read from the browser.
import { useEffect, useState } from "react";
import { api } from "./api.js";

const SW_URL = "/inbox/sw.js";
const SCOPE = "/inbox/";

export const pushSupported = () =>
  "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

// The VAPID key arrives base64url; `subscribe` takes its bytes (some browsers refuse the string).
export function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

async function currentSubscription() {
  const registration = await navigator.serviceWorker.getRegistration(SCOPE);
  return registration ? registration.pushManager.getSubscription() : null;
}

function errorText(err) {
  if (err && err.status === 404) return "Push is not configured on this server (it has no VAPID key).";
  if (err && err.name === "AbortError") return `The browser's push service refused the subscription: ${err.message}`;
  return `Notifications could not be changed: ${(err && err.message) || err}`;
}

const LABELS = {
  unsupported: "Notifications: not supported here",
  blocked: "Notifications: blocked",
  off: "Notifications: off",
  on: "Notifications: on",
  checking: "Notifications…",
};

function explain(state) {
  if (state === "blocked") return "This browser blocks the inbox's notifications: allow them in the site's settings.";
  if (state === "unsupported") {
    return "This browser has no Web Push (on an iPhone, add the inbox to the home screen first).";
  }
  return "Web Push in this browser for items escalated or assigned to you.";
}

// `onMessage` gets the error or explanation to show (the page says it under the header, not in its row).
export function PushControl({ onMessage }) {
  const [state, setState] = useState(() => (pushSupported() ? "checking" : "unsupported"));
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!pushSupported()) return;
    // Registered on every load: the app is installable, and a notification's click finds this window.
    navigator.serviceWorker.register(SW_URL, { scope: SCOPE }).catch(() => null);
    if (Notification.permission === "denied") {
      setState("blocked");
      return;
    }
    currentSubscription().then(
      (subscription) => setState(subscription ? "on" : "off"),
      () => setState("off"),
    );
  }, []);

  const turnOn = async () => {
    // The key first: a server without push never asks for a permission it cannot use.
    const { public_key: publicKey } = await api.pushKey();
    const permission = await Notification.requestPermission();
    if (permission === "denied") return "blocked";
    if (permission !== "granted") throw new Error("the browser's permission was not given");
    const registration = await navigator.serviceWorker.register(SW_URL, { scope: SCOPE });
    await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: keyBytes(publicKey),
    });
    await api.addPushSubscription(subscription.toJSON());
    return "on";
  };

  const turnOff = async () => {
    const subscription = await currentSubscription();
    if (subscription) {
      const { subscriptions } = await api.pushSubscriptions();
      const saved = subscriptions.find((s) => s.endpoint === subscription.endpoint);
      if (saved) await api.deletePushSubscription(saved.subscription_id);
      await subscription.unsubscribe();
    }
    return "off";
  };

  const usable = state === "on" || state === "off";
  const toggle = async () => {
    if (!usable) {
      onMessage(explain(state)); // a disabled button would say nothing on a phone (no hover title there)
      return;
    }
    setBusy(true);
    onMessage(null);
    try {
      const next = await (state === "on" ? turnOff() : turnOn());
      setState(next);
      if (next === "blocked") onMessage(explain(next));
    } catch (err) {
      onMessage(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <button
      type="button"
      className="push-toggle"
      aria-pressed={usable ? state === "on" : undefined}
      disabled={busy || state === "checking"}
      onClick={toggle}
      title={explain(state)}
    >
      {LABELS[state]}
    </button>
  );
}
