/*! Parley triggers: loaded by the widget loader (/widget.js) only for an agent with triggers
 * (Agents → Engage), from the same origin. It evaluates the owner's rules in the visitor's
 * browser and shows a teaser beside the launcher or opens the panel with a greeting. A rule
 * fires once a page, once per visitor every `every_days` days (kept on this site), and no teaser
 * shows again in a browser session after the visitor closed one. */
(function () {
  'use strict';
  var P = window.Parley;
  if (!P || !P._engage) return;
  P._engage(function (api) {
    var cfg = api.cfg, agent = api.agent, look = api.look;
    var SEEN = 'parley:seen:' + agent, SHUT = 'parley:shut:' + agent, VISIT = 'parley:visit:' + agent;
    var rules = cfg.triggers || [], scrolled = 0, exited = false;
    var context = api.context, teaser = null, fired = {}, returning;
    // A teaser's close button, in the panel's language (a Rust test keeps the keys the panel's).
    var DISMISS = {
      en: 'Dismiss', 'zh-Hans': '关闭', 'zh-Hant': '關閉', ja: '閉じる', ko: '닫기', es: 'Cerrar', fr: 'Fermer',
      de: 'Schließen', 'pt-BR': 'Fechar', ar: 'إغلاق', vi: 'Đóng', th: 'ปิด', id: 'Tutup'
    };

    var style = document.createElement('style');
    style.textContent =
      '.tz{position:fixed;bottom:88px;' + look.side + ':20px;z-index:2147483000;max-width:min(300px,calc(100vw - 40px));' +
      'box-sizing:border-box;padding:14px 16px;border-radius:14px;background:' + look.dark + ';color:' + look.text + ';' +
      'box-shadow:0 8px 28px rgba(0,0,0,.22);font:400 15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"PingFang SC","Microsoft YaHei",sans-serif}' +
      '.tz button{font:inherit;cursor:pointer}' +
      '.tq{all:unset;display:block;cursor:pointer;padding-inline-end:22px;white-space:pre-line}' +
      '.tq:focus-visible,.tn:focus-visible,.tx:focus-visible{outline:3px solid ' + look.color + ';outline-offset:2px}' +
      '.tx{position:absolute;top:6px;inset-inline-end:6px;width:28px;height:28px;border:0;border-radius:50%;background:none;color:inherit;' +
      'display:flex;align-items:center;justify-content:center;padding:0}' +
      '.tb{display:flex;flex-wrap:wrap;gap:8px;margin-top:10px}' +
      '.tn{border:1.5px solid ' + look.color + ';background:' + look.color + ';color:' + look.ink +
      ';border-radius:18px;padding:6px 14px;font-weight:600}';
    api.root.appendChild(style);

    function session(key, value) {
      try {
        if (value === undefined) return sessionStorage.getItem(key);
        sessionStorage.setItem(key, value);
      } catch (err) { return null; }
    }
    function seen() {
      try { return JSON.parse(api.stored(SEEN) || '{}') || {}; } catch (err) { return {}; }
    }
    function rule(name) {
      for (var i = 0; i < rules.length; i++) if (rules[i].name === name) return rules[i];
      return null;
    }
    // The page's address against a rule, as parley_engine::engine::engage::url_matches decides.
    function urlOk(u) {
      if (!u) return true;
      var v = u.value, q = v.indexOf('?') >= 0 ? location.search : '';
      if (u.kind === 'matches') {
        try { return new RegExp(v).test(location.origin + location.pathname + location.search); } catch (err) { return false; }
      }
      var subject = (v.charAt(0) === '/' ? '' : location.origin) + location.pathname + q;
      return u.kind === 'is' ? subject === v : subject.indexOf(v) === 0;
    }
    // Whether `t` may fire now; `now` skips its waits (Parley.trigger).
    function may(t, now) {
      var w = t.when || {}, last = seen()[t.name], c = w.context || [];
      var open = !cfg.availability || cfg.availability.open;
      if (teaser || api.isOpen() || fired[t.name]) return false;
      if (t.show.kind === 'teaser' && session(SHUT)) return false;
      if (last && Date.now() - last < (t.every_days || 1) * 864e5) return false;
      if (!urlOk(w.url)) return false;
      if (w.visitor && (w.visitor === 'returning') !== returning) return false;
      if (w.hours && open !== (w.hours === 'open')) return false;
      if (w.languages && w.languages.length && w.languages.indexOf(api.browserLanguage()) < 0) return false;
      for (var i = 0; i < c.length; i++) {
        var have = context && typeof context === 'object' ? context[c[i].key] : undefined;
        if (have === undefined || have === null || String(have) !== c[i].value) return false;
      }
      if (now) return true;
      return !w.manual && (!w.seconds || performance.now() >= w.seconds * 1000) &&
        (!w.scroll || scrolled >= w.scroll) && (!w.exit_intent || exited);
    }
    function check() {
      for (var i = 0; i < rules.length; i++) if (may(rules[i], false)) return fire(rules[i], false);
    }
    // Shown and clicked, counted for the dashboard: a text body, so no pre-flight.
    function count(name, event) {
      fetch(api.app + '/api/v1/agents/' + encodeURIComponent(agent) + '/engage', {
        method: 'POST', body: JSON.stringify({ trigger: name, event: event }), credentials: 'omit', keepalive: true
      }).catch(function () {});
    }
    function fire(t, preview) {
      fired[t.name] = 1;
      if (!preview) {
        var s = seen();
        s[t.name] = Date.now();
        api.stored(SEEN, JSON.stringify(s));
        count(t.name, 'shown');
      }
      var show = t.show, detail = { trigger: t.name };
      if (show.kind === 'open') {
        api.post({ type: 'parley:greet', text: show.greeting });
        api.open();
        api.emit('teaser:shown', detail);
        return;
      }
      teaser = document.createElement('section');
      teaser.className = 'tz';
      teaser.setAttribute('aria-label', cfg.name || 'Chat');
      function click(text) {
        return function () {
          if (!preview) count(t.name, 'clicked');
          api.emit('teaser:clicked', { trigger: t.name, button: text });
          api.open(text ? { message: text } : undefined);
        };
      }
      function dismiss() {
        session(SHUT, '1');
        hide();
        api.emit('teaser:closed', detail);
        api.button.focus();
      }
      var x = document.createElement('button'), words = document.createElement('button');
      x.type = words.type = 'button';
      x.className = 'tx';
      x.setAttribute('aria-label', DISMISS[api.language()] || DISMISS.en);
      x.innerHTML = api.svg('<path d="M7 7l10 10M17 7L7 17" stroke="currentColor" stroke-width="2" stroke-linecap="round"/>', 18);
      x.addEventListener('click', dismiss);
      teaser.addEventListener('keydown', function (e) { if (e.key === 'Escape') dismiss(); });
      words.className = 'tq';
      words.textContent = show.message;
      words.addEventListener('click', click(null));
      teaser.appendChild(x);
      teaser.appendChild(words);
      if (show.buttons && show.buttons.length) {
        var row = document.createElement('div');
        row.className = 'tb';
        show.buttons.forEach(function (b) {
          var n = document.createElement('button');
          n.type = 'button';
          n.className = 'tn';
          n.textContent = b;
          n.addEventListener('click', click(b));
          row.appendChild(n);
        });
        teaser.appendChild(row);
      }
      // Before the launcher in the tab order; announced without taking the focus.
      var live = document.createElement('div');
      live.setAttribute('role', 'status');
      live.style.cssText = 'position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)';
      teaser.appendChild(live);
      api.root.insertBefore(teaser, api.button);
      setTimeout(function () { live.textContent = show.message; }, 100);
      api.emit('teaser:shown', detail);
    }
    function hide() {
      if (teaser && teaser.parentNode) teaser.parentNode.removeChild(teaser);
      teaser = null;
    }
    function depth() {
      var d = document.documentElement, p = Math.round((scrollY + innerHeight) / Math.max(d.scrollHeight, 1) * 100);
      if (p > scrolled) { scrolled = p; check(); }
    }
    function leaving(e) {
      if (!e.relatedTarget && e.clientY <= 0 && !exited) { exited = true; check(); }
    }

    // New or returning: decided at the first page of a browser session.
    if (session(VISIT) === null) { session(VISIT, api.stored(VISIT) ? 'r' : 'n'); api.stored(VISIT, '1'); }
    returning = session(VISIT) === 'r';
    // The owner's preview link (`#parley-preview=NAME`): shown at once, nothing counted or kept.
    var preview = /#parley-preview=([\w-]+)/.exec(location.hash), asked = preview && rule(preview[1]);
    if (asked) fire(asked, true);
    else {
      rules.forEach(function (r) {
        var w = r.when || {};
        // Seconds count from the page's start (performance.now()), not from this script's.
        if (w.seconds) setTimeout(check, Math.max(0, w.seconds * 1000 - performance.now()) + 20);
        if (w.scroll) addEventListener('scroll', depth, { passive: true });
        if (w.exit_intent && matchMedia('(pointer:fine)').matches) document.addEventListener('mouseout', leaving);
      });
      depth();
      check();
    }
    return {
      opened: hide,
      context: function (value) { context = value; check(); },
      trigger: function (name) {
        var t = rule(name);
        if (t && may(t, true)) fire(t, false);
      }
    };
  });
})();
