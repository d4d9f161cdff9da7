#!/usr/bin/env bash
# End-to-end check of the `small` test site and its nginx config: builds the site in a temporary
# directory, serves it with nginx on a free port, checks every URL's status, type, ETag and
# conditional requests (and the run-2 changes), then stops nginx with QUIT and makes sure no
# nginx process of this config (master or worker) is left. Exits non-zero on the first failure.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
NGINX="${NGINX:-/usr/sbin/nginx}"
[ -x "$NGINX" ] || NGINX="$(command -v nginx || true)"
[ -n "$NGINX" ] || { echo "FAIL: nginx is not installed"; exit 1; }

DIR="$(mktemp -d /tmp/parley-site.XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
BASE="http://127.0.0.1:$PORT"
CONF="$DIR/nginx.conf"
MASTER="" WORKERS="" FAILS=0 PASSES=0

cleanup() {
    if [ -n "$MASTER" ] && kill -0 "$MASTER" 2>/dev/null; then
        kill -QUIT "$MASTER" 2>/dev/null; sleep 1; kill -KILL "$MASTER" 2>/dev/null
    fi
    for w in $WORKERS; do kill -KILL "$w" 2>/dev/null; done
    [ -n "${KEEP:-}" ] || rm -rf "$DIR"
}
trap cleanup EXIT

ok()   { PASSES=$((PASSES + 1)); echo "ok   $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }

python3 "$HERE/make_site.py" small "$DIR" --base "$BASE" || { echo "FAIL: make_site.py small"; exit 1; }
mkdir -p "$DIR/tmp"
sed -e "s#__DIR__#$DIR#g" -e "s#__PORT__#$PORT#g" "$DIR/nginx.conf.template" > "$CONF"
grep -q '__' "$CONF" && { echo "FAIL: placeholders left in $CONF"; exit 1; }
"$NGINX" -t -q -p "$DIR/" -e "$DIR/error.log" -c "$CONF" 2>&1 | grep -v 'directive makes sense only if' >&2
"$NGINX" -p "$DIR/" -e "$DIR/error.log" -c "$CONF" 2>>"$DIR/stderr.log" &
for _ in $(seq 1 50); do
    curl -s -o /dev/null "$BASE/robots.txt" && break
    sleep 0.1
done
MASTER="$(cat "$DIR/nginx.pid" 2>/dev/null || true)"
[ -n "$MASTER" ] || { echo "FAIL: nginx did not start"; cat "$DIR/error.log" "$DIR/stderr.log"; exit 1; }
WORKERS="$(pgrep -P "$MASTER" | tr '\n' ' ')"
[ -n "$WORKERS" ] && ok "nginx master $MASTER, workers $WORKERS on $BASE" || fail "no nginx worker under master $MASTER"

# status PATH EXPECTED_STATUS [CONTENT_TYPE_PREFIX]
check() {
    local path="$1" want="$2" ctype="${3:-}" got hdr
    hdr="$(curl -s -o /dev/null -D - "$BASE$path" | tr -d '\r')"
    got="$(printf '%s\n' "$hdr" | head -1 | cut -d' ' -f2)"
    [ "$got" = "$want" ] || { fail "$path: status $got, want $want"; return; }
    if [ -n "$ctype" ]; then
        printf '%s\n' "$hdr" | grep -qi "^content-type: $ctype" \
            || { fail "$path: $(printf '%s\n' "$hdr" | grep -i '^content-type') , want $ctype"; return; }
    fi
    if [ "$want" = 200 ]; then
        local etag lm
        etag="$(printf '%s\n' "$hdr" | grep -i '^etag:' | cut -d' ' -f2-)"
        lm="$(printf '%s\n' "$hdr" | grep -i '^last-modified:' | cut -d' ' -f2-)"
        [ -n "$etag" ] || { fail "$path: no ETag"; return; }
        [ -n "$lm" ] || { fail "$path: no Last-Modified"; return; }
        local c1 c2
        c1="$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE$path")"
        c2="$(curl -s -o /dev/null -w '%{http_code}' -H "If-Modified-Since: $lm" "$BASE$path")"
        [ "$c1" = 304 ] || { fail "$path: If-None-Match gave $c1"; return; }
        [ "$c2" = 304 ] || { fail "$path: If-Modified-Since gave $c2"; return; }
        ok "$path 200 ${ctype:-} ETag $etag, 304 on If-None-Match and If-Modified-Since"
    else
        ok "$path $got"
    fi
}

check /robots.txt 200 text/plain
check /sitemap_index.xml 200 application/xml
check /sitemap-pages.xml 200 application/xml
check /sitemap-docs.xml.gz 200 'application/\(gzip\|octet-stream\)'
check / 200 text/html
for p in /index.html /pricing.html /docs/setup.html /docs/faq.html /zh/about.html /blog/post.html \
         /blog/post-copy.html /changing.html /gone.html /big.html /private/secret.html; do
    check "$p" 200 'text/html; charset=utf-8'
done
check /files/brochure.pdf 200 application/pdf
check /files/data.bin 200 application/octet-stream
check /old-pricing 301
check /removed.html 410
check /no-such-page.html 404

loc="$(curl -s -o /dev/null -w '%{redirect_url}' "$BASE/old-pricing")"
[ "$loc" = "$BASE/pricing.html" ] && ok "/old-pricing -> $loc" || fail "/old-pricing redirects to '$loc'"
curl -s "$BASE/robots.txt" | grep -qx "Sitemap: $BASE/sitemap_index.xml" && ok "robots.txt names the sitemap index" \
    || fail "robots.txt has no 'Sitemap: $BASE/sitemap_index.xml'"
curl -s "$BASE/robots.txt" | grep -qx "Disallow: /private/" && ok "robots.txt disallows /private/" || fail "robots.txt: no Disallow: /private/"
curl -s "$BASE/sitemap-docs.xml.gz" | gunzip | grep -q "<loc>$BASE/docs/faq.html</loc>" \
    && ok "sitemap-docs.xml.gz gunzips and lists /docs/faq.html" || fail "sitemap-docs.xml.gz"
big="$(curl -s -o /dev/null -w '%{size_download}' "$BASE/big.html")"
[ "$big" -gt 3000000 ] && ok "/big.html is $big bytes" || fail "/big.html is only $big bytes"
curl -s "$BASE/zh/about.html" | grep -q '十七名工程师' && ok "/zh/about.html serves its Chinese fact" || fail "/zh/about.html fact"
curl -s "$BASE/files/brochure.pdf" | head -c 5 | grep -q '%PDF-' && ok "brochure.pdf is a PDF" || fail "brochure.pdf is not a PDF"
python3 - "$DIR/expect.json" <<'PY' && ok "expect.json: facts on their pages, boilerplate on every page, never a fact in boilerplate" || fail "expect.json consistency"
import json, sys, os, re, html
e = json.load(open(sys.argv[1])); www = os.path.join(os.path.dirname(sys.argv[1]), "www")
bp = e["boilerplate"]
for path, p in e["pages"].items():
    f = os.path.join(www, path.lstrip("/"))
    if not os.path.isfile(f) or "fact" not in p:
        continue
    raw = open(f, "rb").read()
    if path.endswith(".html"):
        text = html.unescape(raw.decode())
        assert p["fact"] in text, path
        for line in bp["lines"]:
            assert line in text, (path, line)
    elif path.endswith(".bin"):
        assert p["fact"].encode() in raw, path
facts = {p["fact"]: path for path, p in e["pages"].items() if "fact" in p}
for line in bp["lines"] + [bp["nav_text"], bp["cookie_banner"]]:
    assert not any(f in line for f in facts), line
for root, _, files in os.walk(www):
    for name in files:
        rel = "/" + os.path.relpath(os.path.join(root, name), www)
        raw = open(os.path.join(root, name), "rb").read()
        for fact, path in facts.items():
            if fact.encode() in raw:
                assert rel == path or {rel, path} == {"/blog/post.html", "/blog/post-copy.html"}, (fact, rel)
PY

# Run 2's changes, as the crawler test makes them: changing.html rewritten, gone.html deleted.
old_etag="$(curl -s -o /dev/null -D - "$BASE/changing.html" | tr -d '\r' | grep -i '^etag:' | cut -d' ' -f2-)"
cp "$DIR/changing.v2.html" "$DIR/www/changing.html"
rm "$DIR/www/gone.html"
c="$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $old_etag" "$BASE/changing.html")"
[ "$c" = 200 ] && ok "changed /changing.html answers 200 to its old ETag" || fail "changed /changing.html gave $c to its old ETag"
curl -s "$BASE/changing.html" | grep -q '07:15' && ok "/changing.html serves v2" || fail "/changing.html is not v2"
check /gone.html 404
grep -q '/private/' "$DIR/access.log" && ok "access.log records requests (including this check's /private/ one)" \
    || fail "access.log does not record requests"

# Stop: QUIT to the master, which ends its worker gracefully, then nothing of this config may live.
kill -QUIT "$MASTER"
for _ in $(seq 1 50); do kill -0 "$MASTER" 2>/dev/null || break; sleep 0.1; done
wait 2>/dev/null
kill -0 "$MASTER" 2>/dev/null && fail "nginx master $MASTER still alive 5 s after QUIT" || ok "nginx master $MASTER exited"
alive=""
for w in $WORKERS; do kill -0 "$w" 2>/dev/null && alive="$alive $w"; done
[ -z "$alive" ] && ok "no worker left (was: $WORKERS)" || fail "workers still alive:$alive"
left="$(pgrep -f "$CONF" || true)"
[ -z "$left" ] && ok "pgrep -f $CONF finds nothing" || fail "processes of $CONF still alive: $left"
[ -e "$DIR/nginx.pid" ] && fail "nginx.pid left behind" || ok "nginx.pid removed"
MASTER="" ; WORKERS=""

# bench: deterministic, fast, 1000 pages of 4-13 KB, 30 questions whose facts sit on one page each.
t0=$(date +%s.%N)
python3 "$HERE/make_site.py" bench "$DIR/bench" --base "$BASE" 2>/dev/null || fail "make_site.py bench"
t1=$(date +%s.%N)
python3 - "$DIR/bench" "$t0" "$t1" <<'PY' && ok "bench: 1000 pages, 30 questions, facts unique, generated in under 5 s" || fail "bench"
import json, os, sys
out, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
assert t1 - t0 < 5, t1 - t0
www = os.path.join(out, "www")
pages = [os.path.join(r, f) for r, _, fs in os.walk(www) for f in fs if f.endswith(".html")]
assert len(pages) == 1000, len(pages)
sizes = [os.path.getsize(p) for p in pages]
assert 4000 <= min(sizes) and max(sizes) <= 13000, (min(sizes), max(sizes))
q = json.load(open(os.path.join(out, "questions.json")))
assert len(q) == 30 and sum(x["lang"] == "zh" for x in q) == 5
assert len({x["answer_path"] for x in q}) == 30
texts = {p: open(p, encoding="utf-8").read() for p in pages}
for x in q:
    assert x["fact"] not in x["question"]
    holders = [p for p, t in texts.items() if x["fact"] in t]
    assert holders == [os.path.join(www, x["answer_path"].lstrip("/"))], (x["fact"], holders)
bp = json.load(open(os.path.join(out, "boilerplate.json")))
assert all(all(l in t for l in bp["lines"]) for t in texts.values())
PY

echo "check_site: $PASSES passed, $FAILS failed"
[ "$FAILS" = 0 ]
