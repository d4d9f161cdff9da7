// Parley console's notifications in the browser (issue 43), called from the console's
// WebAssembly: a short tone made with Web Audio (no audio file), desktop notifications once the
// operator allowed them (asked only when they press the button), and Web Push subscription
// through the service worker at /admin/push-sw.js.
(function () {
  "use strict";
  let audio = null;

  function keyBytes(base64url) {
    const padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(padded);
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  async function registration() {
    if (!("serviceWorker" in navigator) || !("PushManager" in window)) throw new Error("This browser has no Web Push.");
    await navigator.serviceWorker.register("/admin/push-sw.js", { scope: "/admin/" });
    return navigator.serviceWorker.ready;
  }

  window.parleyNotify = {
    permission() {
      return "Notification" in window ? Notification.permission : "unsupported";
    },
    ask() {
      return "Notification" in window ? Notification.requestPermission() : Promise.resolve("unsupported");
    },
    beep() {
      try {
        audio = audio || new (window.AudioContext || window.webkitAudioContext)();
        const osc = audio.createOscillator();
        const gain = audio.createGain();
        osc.type = "sine";
        osc.frequency.value = 880;
        gain.gain.setValueAtTime(0.0001, audio.currentTime);
        gain.gain.exponentialRampToValueAtTime(0.2, audio.currentTime + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.35);
        osc.connect(gain).connect(audio.destination);
        osc.start();
        osc.stop(audio.currentTime + 0.4);
      } catch (_) {
        // No sound where the browser allows none (no gesture yet): the title still says it.
      }
    },
    show(title, body, url) {
      if (!("Notification" in window) || Notification.permission !== "granted") return;
      const n = new Notification(title, { body: body, tag: "parley-console" });
      n.onclick = () => {
        window.focus();
        if (url) location.href = url;
        n.close();
      };
    },
    async subscribe(publicKey) {
      const reg = await registration();
      if ((await this.ask()) !== "granted") throw new Error("Notifications are not allowed in this browser.");
      const sub =
        (await reg.pushManager.getSubscription()) ||
        (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) }));
      const j = sub.toJSON();
      return JSON.stringify({ endpoint: j.endpoint, p256dh: j.keys.p256dh, auth: j.keys.auth });
    },
    async unsubscribe() {
      if (!("serviceWorker" in navigator)) return "";
      const reg = await navigator.serviceWorker.getRegistration("/admin/");
      const sub = reg && (await reg.pushManager.getSubscription());
      if (!sub) return "";
      const endpoint = sub.endpoint;
      await sub.unsubscribe();
      return endpoint;
    },
  };
})();
