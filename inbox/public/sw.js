// The inbox's service worker (scope /inbox/): Web Push notifications for items escalated or assigned to
// this browser's operator, with the item's one-tap answers as the notification's actions. It has no fetch
// handler: the inbox is never served from a cache (a stale page could answer with stale state).
importScripts("/inbox/push-actions.js");

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("push", (event) => event.waitUntil(self.BatonPush.onPush(event, self.registration)));
self.addEventListener("notificationclick", (event) =>
  event.waitUntil(
    self.BatonPush.onNotificationClick(event, {
      registration: self.registration,
      clients: self.clients,
      fetcher: (path, init) => fetch(path, init),
    }),
  ),
);
