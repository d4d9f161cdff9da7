// Parley console's service worker (issue 43): shows an operator's Web Push notification and, on
// click, focuses the console (or opens it) at the conversation. Served at /admin/push-sw.js, so
// its scope is /admin/. The payload holds ids only: {kind, conversation_id, notification_id, url}.
const TITLES = {
  assigned: "A conversation is assigned to you",
  mention: "You were mentioned in a note",
  queue: "New conversation in the queue",
  reply: "The visitor wrote",
};

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (_) {
    data = {};
  }
  const title = TITLES[data.kind] || "Parley";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: data.conversation_id ? "Conversation " + data.conversation_id.slice(0, 8) : "",
      tag: data.notification_id || undefined,
      data: { url: data.url || "" },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const scope = self.registration.scope;
  let url = (event.notification.data && event.notification.data.url) || "";
  // Only the console's own pages: anything else opens the notifications page.
  if (!url.startsWith(scope)) url = scope + "notifications";
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      for (const w of windows) {
        if (w.url.startsWith(scope) && "focus" in w) {
          return w.focus().then((focused) => (focused.navigate ? focused.navigate(url) : focused));
        }
      }
      return self.clients.openWindow(url);
    }),
  );
});
