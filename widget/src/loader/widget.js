/*! Parley widget loader. Embed with:
 *  <script src="https://HOST/widget.js" data-agent="AGENT_KEY" async></script>
 * It draws a launcher; the chat panel itself lives in an iframe on HOST, loaded only when the
 * visitor opens it. Host and panel talk with postMessage, each checking the other's origin. */
(function () {
  'use strict';
  if (window.Parley && window.Parley.version) return;
  var script = document.currentScript;
  if (!script || !script.src) return;
  var agent = script.getAttribute('data-agent') || '';
  var app = new URL(script.src, location.href).origin;
  var host = location.origin;
  var cfg = null, frame = null, ready = false, isOpen = false, booted = false, queue = [], handlers = {};
  // A sign-out asked for before the panel was loaded is kept (on this site) until it is.
  var OUT = 'parley:logout:' + agent;
  var shell, root, button, box, look;
  // The trigger script's hooks once it is loaded; what the host asked of it before.
  var hooks = null, asked = [], context = null;
  // This visitor's conversation was under way at (ms; kept on this site); replies not yet seen.
  var TALKED = 'parley:talked:' + agent, unread = 0;

  // The owner's launcher icon (chat, help, sparkle or none) and label; a close cross when open.
  var ICONS = {
    chat: '<path d="M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.5 4v-4h0A2.5 2.5 0 0 1 4 13.5z" fill="currentColor"/>',
    help: '<circle cx="12" cy="12" r="9.5" fill="none" stroke="currentColor" stroke-width="2"/><path d="M9.3 9.2a2.8 2.8 0 1 1 3.9 2.6c-.8.4-1.2.9-1.2 1.8v.6" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/><circle cx="12" cy="17.3" r="1.2" fill="currentColor"/>',
    sparkle: '<path d="M12 2.5l2.2 6.1 6.3 2.4-6.3 2.4L12 19.5l-2.2-6.1L3.5 11l6.3-2.4zM19 16l.9 2.1 2.1.9-2.1.9L19 22l-.9-2.1-2.1-.9 2.1-.9z" fill="currentColor"/>'
  };
  function svg(paths, size) {
    return '<svg viewBox="0 0 24 24" width="' + size + '" height="' + size + '" aria-hidden="true">' + paths + '</svg>';
  }
  function text(s) {
    var d = document.createElement('span');
    d.textContent = s;
    return d.innerHTML;
  }
  function icon(open) {
    if (open) return svg('<path d="M6 6l12 12M18 6L6 18" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"/>', 26);
    var t = (cfg && cfg.theme) || {};
    var pic = t.launcher_icon === 'none' && t.launcher_label ? '' : svg(ICONS[t.launcher_icon] || ICONS.chat, 28);
    return pic + (t.launcher_label ? '<span>' + text(t.launcher_label) + '</span>' : '');
  }

  // The panel's language, chosen as widget/src/i18n chooses it (a Rust test keeps OPEN's keys
  // and the panel's languages alike): the agent's setting, or the first of the browser's
  // languages the panel speaks. "Open chat" is said in it; Arabic mirrors the launcher.
  // "(2 new)" after the launcher's label, while replies wait unread.
  var UNREAD = {
    en: 'new', 'zh-Hans': '条新消息', 'zh-Hant': '則新訊息', ja: '件の新着', ko: '개의 새 메시지', es: 'sin leer',
    fr: 'non lu', de: 'ungelesen', 'pt-BR': 'não lida', ar: 'جديدة', vi: 'tin mới', th: 'ข้อความใหม่', id: 'pesan baru'
  };
  var OPEN = {
    en: 'Open chat', 'zh-Hans': '打开对话', 'zh-Hant': '開啟對話', ja: 'チャットを開く', ko: '채팅 열기',
    es: 'Abrir chat', fr: 'Ouvrir le chat', de: 'Chat öffnen', 'pt-BR': 'Abrir chat', ar: 'فتح المحادثة',
    vi: 'Mở cuộc trò chuyện', th: 'เปิดแชท', id: 'Buka obrolan'
  };
  function language() {
    var set = cfg && cfg.language;
    return set && set !== 'auto' ? set : browserLanguage();
  }
  function browserLanguage() {
    var list = navigator.languages || [navigator.language || ''];
    for (var i = 0; i < list.length; i++) {
      var p = String(list[i]).toLowerCase().split(/[-_]/);
      if (p[0] === 'zh') {
        var rest = p.slice(1);
        return rest.indexOf('hans') < 0 && rest.some(function (x) { return /^(hant|tw|hk|mo)$/.test(x); }) ? 'zh-Hant' : 'zh-Hans';
      }
      if (p[0] === 'pt') return 'pt-BR';
      if (p[0] === 'in') return 'id';
      if (OPEN.hasOwnProperty(p[0])) return p[0];
    }
    return 'en';
  }
  function openLabel() { return OPEN[language()] || OPEN.en; }

  // White or near-black on the owner's colour, whichever contrasts more, pure black when the
  // near-black falls short (as the panel chooses; WCAG relative luminance).
  function onColor(hex) {
    var h = hex.length === 4 ? hex.replace(/[0-9a-f]/gi, '$&$&').slice(1) : hex.slice(1);
    var l = [0, 2, 4].map(function (i) {
      var c = parseInt(h.substr(i, 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    var y = 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
    var light = 1.05 / (y + 0.05), dark = (y + 0.05) / 0.0603;
    if (light >= dark && light >= 4.5) return '#fff';
    if (dark > light && dark >= 4.5) return '#111827';
    return (y + 0.05) / 0.05 >= light ? '#000' : '#fff';
  }

  function size(n, lo, hi, d) {
    return typeof n === 'number' && n >= lo && n <= hi ? Math.round(n) : d;
  }

  function css(t, mirrored) {
    var side = (t.position === 'left') !== mirrored ? 'left' : 'right', color = safeColor(t.color);
    var ink = safeColor(t.text_color, onColor(color));
    var dark = t.scheme === 'dark' ? '#111827' : '#fff';
    var w = size(t.width, 320, 480, 380), h = size(t.height, 400, 800, 640);
    look = { side: side, color: color, ink: ink, dark: dark, text: t.scheme === 'dark' ? '#f9fafb' : '#111827' };
    return ':host{all:initial}' +
      '.l{position:fixed;bottom:20px;' + side + ':20px;z-index:2147483000;width:56px;height:56px;border:0;border-radius:50%;' +
      'background:' + color + ';color:' + ink + ';cursor:pointer;display:flex;align-items:center;justify-content:center;gap:8px;' +
      'box-shadow:0 6px 20px rgba(0,0,0,.25);padding:0;margin:0;box-sizing:border-box;' +
      'font:600 15px/1 system-ui,-apple-system,"Segoe UI",Roboto,"PingFang SC","Microsoft YaHei",sans-serif}' +
      '.l.t{width:auto;min-width:56px;border-radius:28px;padding:0;padding-inline:14px 18px}' +
      '.l:focus-visible{outline:3px solid #111;outline-offset:3px}' +
      '.n{position:absolute;top:-4px;inset-inline-end:-4px;min-width:20px;height:20px;padding:0 6px;box-sizing:border-box;' +
      'border-radius:10px;background:#c81e1e;color:#fff;font:700 12px/20px system-ui,sans-serif;text-align:center}' +
      '.b{position:fixed;bottom:88px;' + side + ':20px;z-index:2147483000;width:' + w + 'px;max-width:calc(100vw - 40px);' +
      'height:min(' + h + 'px,calc(100vh - 110px));' +
      'border-radius:14px;overflow:hidden;box-shadow:0 12px 40px rgba(0,0,0,.28);background:' + dark + ';display:none}' +
      '.b.o{display:block}' +
      '.b iframe{border:0;width:100%;height:100%;display:block;background:' + dark + '}' +
      '@media (max-width:640px){.b{inset:0;width:100%;max-width:none;height:100%;border-radius:0;bottom:0}.b.o~.l{display:none}}';
  }

  function safeColor(c, otherwise) {
    return /^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/.test(c || '') ? c : otherwise || '#4f46e5';
  }

  function draw() {
    if (shell) return;
    var theme = (cfg && cfg.theme) || {};
    shell = document.createElement('div');
    shell.setAttribute('data-parley', '');
    root = shell.attachShadow ? shell.attachShadow({ mode: 'open' }) : shell;
    var style = document.createElement('style');
    var mirrored = language() === 'ar';
    if (mirrored) shell.setAttribute('dir', 'rtl');
    style.textContent = css(theme, mirrored);
    box = document.createElement('div');
    box.className = 'b';
    button = document.createElement('button');
    button.type = 'button';
    button.className = theme.launcher_label ? 'l t' : 'l';
    button.setAttribute('aria-expanded', 'false');
    label();
    button.addEventListener('click', function () { isOpen ? close() : open(); });
    root.appendChild(style);
    root.appendChild(box);
    root.appendChild(button);
    document.body.appendChild(shell);
  }

  // On a phone the open panel covers exactly the visible screen, even when the host page is
  // wider than the screen (the browser zooms such pages out) or the visitor has zoomed: it is
  // laid out at the screen's width and scaled to the visual viewport.
  var vv = window.visualViewport;
  function fit() {
    if (!box) return;
    var s = box.style;
    var screenWidth = vv ? vv.width * vv.scale : innerWidth;
    if (!isOpen || !vv || screenWidth > 640) {
      s.cssText = '';
      button.style.display = '';
      return;
    }
    // The panel's own close button stands in for the launcher, which would cover it.
    button.style.display = 'none';
    s.cssText = 'border-radius:0;max-width:none;left:' + vv.offsetLeft + 'px;top:' + vv.offsetTop + 'px;right:auto;bottom:auto;width:' +
      screenWidth + 'px;height:' + (vv.height * vv.scale) + 'px;transform-origin:0 0;transform:scale(' +
      (1 / vv.scale) + ')';
  }
  if (vv) { vv.addEventListener('resize', fit); vv.addEventListener('scroll', fit); }

  function post(msg) {
    if (frame && ready) frame.contentWindow.postMessage(msg, app);
    else queue.push(msg);
  }

  // The host page's `Parley.on(name, handler)`; a handler's error does not stop the others.
  function emit(name, detail) {
    (handlers[name] || []).slice().forEach(function (h) {
      try { h(detail); } catch (e) { setTimeout(function () { throw e; }); }
    });
  }

  // The panel's frame: made when the visitor opens it, or at once (hidden) for a visitor whose
  // conversation is under way, so that replies arriving while it is closed show on the launcher.
  function load() {
    if (frame) return;
    frame = document.createElement('iframe');
    frame.title = (cfg && cfg.name) || 'Chat';
    frame.setAttribute('allow', 'clipboard-write');
    frame.src = app + '/embed/' + encodeURIComponent(agent) + '?origin=' + encodeURIComponent(host);
    box.appendChild(frame);
  }

  // The launcher's label and, while closed, its unread badge.
  function label() {
    var n = isOpen ? 0 : unread;
    button.innerHTML = icon(isOpen) + (n ? '<span class="n" aria-hidden="true">' + (n > 9 ? '9+' : n) + '</span>' : '');
    button.setAttribute('aria-label', openLabel() + (cfg && cfg.name ? ': ' + cfg.name : '') +
      (n ? ' (' + n + ' ' + (UNREAD[language()] || UNREAD.en) + ')' : ''));
  }

  function open(opts) {
    var was = isOpen;
    draw();
    if (hooks) hooks.opened();
    load();
    isOpen = true;
    box.className = 'b o';
    fit();
    if (ready) frame.focus();
    label();
    button.setAttribute('aria-expanded', 'true');
    post({ type: 'parley:open' });
    if (opts && typeof opts.message === 'string' && opts.message) post({ type: 'parley:send', message: opts.message });
    if (!was) emit('open');
  }

  function close() {
    if (!shell) return;
    if (isOpen) setTimeout(function () { emit('close'); });
    isOpen = false;
    box.className = 'b';
    fit();
    label();
    button.setAttribute('aria-expanded', 'false');
    button.focus();
    post({ type: 'parley:hidden' });
  }

  window.addEventListener('message', function (e) {
    if (e.origin !== app || !frame || e.source !== frame.contentWindow) return;
    var type = e.data && e.data.type;
    if (type === 'parley:ready') {
      ready = true;
      // Focus moves into the panel when it opens (the panel then focuses its input).
      if (isOpen) frame.focus();
      // The page's address: a reply mailed after the visitor left links back to it.
      frame.contentWindow.postMessage({ type: 'parley:page', url: location.href.slice(0, 2048) }, app);
      if (stored(OUT)) { frame.contentWindow.postMessage({ type: 'parley:logout' }, app); stored(OUT, null); }
      while (queue.length) frame.contentWindow.postMessage(queue.shift(), app);
    } else if (type === 'parley:close') {
      close();
    } else if (type === 'parley:unread' && typeof e.data.count === 'number') {
      unread = Math.max(0, Math.floor(e.data.count));
      label();
    } else if (type === 'parley:talking') {
      stored(TALKED, e.data.active ? String(Date.now()) : null);
    } else if (type === 'parley:event' && typeof e.data.name === 'string') {
      emit(e.data.name, e.data.detail);
    }
  });

  function stored(key, value) {
    try {
      if (value === undefined) return localStorage.getItem(key);
      if (value === null) localStorage.removeItem(key); else localStorage.setItem(key, value);
    } catch (err) { return null; }
  }

  function identify(token) {
    if (typeof token === 'string' && token) post({ type: 'parley:identify', token: token });
  }

  window.Parley = {
    version: 2,
    open: open,
    close: close,
    reset: function () { post({ type: 'parley:reset' }); },
    on: function (name, handler) {
      (handlers[name] = handlers[name] || []).push(handler);
      if (name === 'ready' && booted) setTimeout(function () { handler(); });
      return function () {
        var list = handlers[name] || [], i = list.indexOf(handler);
        if (i >= 0) list.splice(i, 1);
      };
    },
    identify: identify,
    logout: function () {
      queue = queue.filter(function (m) { return m.type !== 'parley:identify'; });
      if (frame && ready) post({ type: 'parley:logout' }); else stored(OUT, '1');
    },
    setContext: function (value) {
      var text = JSON.stringify(value === undefined ? null : value);
      if (new TextEncoder().encode(text).length > 2048) throw new RangeError('Parley.setContext: at most 2048 bytes of JSON');
      post({ type: 'parley:context', context: text });
      if (hooks) hooks.context(JSON.parse(text)); else context = JSON.parse(text);
    },
    // Shows the named trigger now (its waits skipped; its other conditions and caps kept).
    trigger: function (name) {
      if (hooks) hooks.trigger(name); else asked.push(name);
    },
    // The trigger script (/widget-engage.js, loaded only for an agent with triggers) plugs in here.
    _engage: function (setup) {
      if (hooks || !cfg) return;
      hooks = setup({
        cfg: cfg, agent: agent, app: app, root: root, button: button, look: look, context: context, stored: stored,
        svg: svg, post: post, emit: emit, open: open, language: language, browserLanguage: browserLanguage,
        isOpen: function () { return isOpen; }
      });
      asked.splice(0).forEach(hooks.trigger);
    }
  };
  identify(script.getAttribute('data-user-token'));

  // The launcher's look comes from the agent's settings, fetched when the page is idle.
  function boot() {
    fetch(app + '/api/v1/agents/' + encodeURIComponent(agent) + '/config', { credentials: 'omit' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .catch(function () { return null; })
      .then(function (c) {
        cfg = c;
        function shown() {
          draw();
          booted = true;
          emit('ready');
          engage();
          // A return mail's link: the panel opens on its conversation (the token leaves the address).
          var back = /#parley-return=([\w-]{1,100})/.exec(location.hash);
          if (back) {
            try { history.replaceState(history.state, '', location.href.split('#')[0]); } catch (err) {}
            open();
            post({ type: 'parley:return', token: back[1] });
          }
          // A conversation in the last 30 days: the panel loads hidden and counts what is new.
          else if (Date.now() - Number(stored(TALKED) || 0) < 30 * 864e5) load();
        }
        function engage() {
          if (!cfg || !((cfg.triggers && cfg.triggers.length) || /#parley-preview=/.test(location.hash))) return;
          var s = document.createElement('script');
          s.src = app + '/widget-engage.js';
          s.async = true;
          document.head.appendChild(s);
        }
        if (document.body) shown(); else addEventListener('DOMContentLoaded', shown);
      });
  }
  (window.requestIdleCallback || function (f) { setTimeout(f, 200); })(boot);
})();
