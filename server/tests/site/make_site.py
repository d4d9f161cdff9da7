#!/usr/bin/env python3
"""Makes the websites that the site crawler's tests crawl (see README.md beside this file).

    python3 make_site.py small OUT_DIR [--base http://127.0.0.1:PORT]
    python3 make_site.py bench OUT_DIR [--pages 1000] [--base http://127.0.0.1:PORT]

Same arguments, same bytes: every choice comes from a seeded random.Random, nothing from the
clock. Standard library only, except fpdf2 for the one PDF of `small` (imported only there).
Without --base, absolute URLs (robots.txt's Sitemap line, the sitemaps, canonical links) hold
the placeholder __BASE__, for a test to replace in every file under www/.
"""

import argparse
import gzip
import html
import json
import os
import random
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PLACEHOLDER = "__BASE__"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)


def esc(s):
    return html.escape(s, quote=True)


def gz(data):
    """Gzip with no timestamp and no file name, so the bytes never change."""
    return gzip.compress(data.encode("utf-8") if isinstance(data, str) else data, 9, mtime=0)


def urlset(base, paths, lastmod="2024-05-02"):
    rows = "".join(
        f"  <url>\n    <loc>{esc(base + p)}</loc>\n    <lastmod>{lastmod}</lastmod>\n  </url>\n" for p in paths
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n"
    )


# --------------------------------------------------------------------------------------------
# Boilerplate: the same on every page of a site; none of it may reach the knowledge index.
# --------------------------------------------------------------------------------------------


class Site:
    def __init__(self, name, tagline, nav, cookie, sidebar_title, sidebar_lines, footer_copy, footer_links, base):
        self.name = name
        self.tagline = tagline
        self.nav = nav  # [(label, path)]
        self.cookie = cookie
        self.sidebar_title = sidebar_title
        self.sidebar_lines = sidebar_lines
        self.footer_copy = footer_copy
        self.footer_links = footer_links  # [(label, path)]
        self.base = base

    def boilerplate(self):
        nav_text = " ".join(label for label, _ in self.nav)
        return {
            "header": [self.name, self.tagline],
            "nav_items": [label for label, _ in self.nav],
            "nav_text": nav_text,
            "cookie_banner": self.cookie + " Accept",
            "sidebar": [self.sidebar_title] + self.sidebar_lines,
            "footer": [self.footer_copy] + [label for label, _ in self.footer_links],
            # Whole sentences, each of which may not appear in any passage (exact substring).
            # nav_items alone are common words ("Pricing"); test the nav as nav_text instead.
            "lines": [self.tagline, self.cookie, self.sidebar_title] + self.sidebar_lines + [self.footer_copy],
            "notes": "Each entry of `lines`, and `nav_text` (whitespace collapsed), must never occur in "
            "a passage. `header[0]` (the site name) and single nav labels also occur in content.",
        }

    def page(self, path, title, body_html, lang="en", canonical=None, extra_head=""):
        nav = "".join(f'<li><a href="{esc(p)}">{esc(label)}</a></li>' for label, p in self.nav)
        side = "".join(f"<li>{esc(line)}</li>" for line in self.sidebar_lines)
        foot = " · ".join(f'<a href="{esc(p)}">{esc(label)}</a>' for label, p in self.footer_links)
        canon = canonical if canonical is not None else path
        return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)} | {esc(self.name)}</title>
<link rel="canonical" href="{esc(self.base + canon)}">
<link rel="stylesheet" href="/assets/site.css">{extra_head}
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}</script>
</head>
<body>
<div id="cookie-banner" class="cookie-banner" role="dialog">{esc(self.cookie)} <button type="button" class="accept">Accept</button></div>
<header class="site-header">
  <a class="logo" href="/index.html">{esc(self.name)}</a>
  <p class="tagline">{esc(self.tagline)}</p>
</header>
<nav class="main-nav" aria-label="Main">
  <ul>{nav}</ul>
</nav>
<div class="layout">
<aside class="sidebar">
  <h3>{esc(self.sidebar_title)}</h3>
  <ul>{side}</ul>
</aside>
<main id="content">
<article>
<h1>{esc(title)}</h1>
{body_html}
</article>
</main>
</div>
<footer class="site-footer">
  <p>{esc(self.footer_copy)}</p>
  <p>{foot}</p>
</footer>
<script>document.querySelector('#cookie-banner .accept').onclick = function () {{ this.parentNode.remove(); }};</script>
</body>
</html>
"""


def paras(texts):
    return "\n".join(f"<p>{esc(t)}</p>" for t in texts)


# --------------------------------------------------------------------------------------------
# small: the crawler's integration test
# --------------------------------------------------------------------------------------------

SMALL_FACTS = {
    "/index.html": (
        "Harborlight was founded in Rostock in 2011 by two ferry schedulers.",
        "Where and when was Harborlight started?",
    ),
    "/pricing.html": (
        "The Harbor plan costs 49 euros per month.",
        "How much is the Harbor plan a month?",
    ),
    "/docs/setup.html": (
        "The sync agent needs TCP port 7341 to be open on the office firewall.",
        "Which port must I open for the sync agent?",
    ),
    "/docs/faq.html": (
        "Refunds are granted within 21 days of purchase, no questions asked.",
        "How many days do I have to ask for a refund?",
    ),
    "/zh/about.html": (
        "公司在青岛设有一个由十七名工程师组成的研发中心。",
        "公司在青岛的研发中心有多少名工程师？",
    ),
    "/blog/post.html": (
        "Nordfjord Ferries cut their weekly planning time by 38 percent with Harborlight.",
        "By how much did Nordfjord Ferries reduce their planning time?",
    ),
    "/blog/post-copy.html": (
        "Nordfjord Ferries cut their weekly planning time by 38 percent with Harborlight.",
        "By how much did Nordfjord Ferries reduce their planning time?",
    ),
    "/changing.html": (
        "The support desk opens at 08:30 on weekdays.",
        "What time does the support desk open on weekdays?",
    ),
    "/gone.html": (
        "The winter promotion code FROST-2024 gives three free months.",
        "What is the code for the winter promotion?",
    ),
    "/big.html": (
        "The archive records exactly 4096 lighthouse visits in 1998.",
        "How many lighthouse visits does the archive record for 1998?",
    ),
    "/private/secret.html": (
        "The internal partner discount code is MOONWALK-77.",
        "What is the partner discount code?",
    ),
    "/files/brochure.pdf": (
        "The Fleet plan comes with a 99.95 percent uptime guarantee.",
        "What uptime does the Fleet plan guarantee?",
    ),
    "/files/data.bin": (
        "The binary blob hides the passphrase ZEBRA-CROSSING-5.",
        "What passphrase is in the binary blob?",
    ),
}
CHANGING_V2_FACT = "The support desk now opens at 07:15 on weekdays, an hour and a quarter earlier than before."


def small_site(base):
    return Site(
        name="Harborlight",
        tagline="Crew and ferry scheduling for small harbours since 2011",
        nav=[
            ("Home", "/index.html"),
            ("Pricing", "/pricing.html"),
            ("Setup guide", "/docs/setup.html"),
            ("FAQ", "/docs/faq.html"),
            ("关于我们", "/zh/about.html"),
            ("Blog", "/blog/post.html"),
        ],
        cookie="We use cookies to keep you signed in and to count visits to our pages. By continuing to browse you agree to our cookie policy.",
        sidebar_title="Quick links for harbour masters",
        sidebar_lines=[
            "Sign up for the Harborlight newsletter: one email a month, no spam.",
            "Call our sales team on +49 381 555 0199 from Monday to Friday.",
        ],
        footer_copy="© 2024 Harborlight Software GmbH, Am Strande 3, 18055 Rostock. All rights reserved.",
        footer_links=[("Home", "/index.html"), ("Pricing", "/pricing.html"), ("FAQ", "/docs/faq.html")],
        base=base,
    )


def make_small(out, base):
    try:
        from fpdf import FPDF  # fpdf2
    except ImportError:
        sys.exit("make_site.py small needs fpdf2 for /files/brochure.pdf: pip install fpdf2")

    www = os.path.join(out, "www")
    if os.path.exists(www):
        shutil.rmtree(www)
    site = small_site(base)
    F = {p: f for p, (f, _) in SMALL_FACTS.items()}
    pages = {}

    pages["/index.html"] = site.page(
        "/index.html",
        "Scheduling for ferries, crews and harbours",
        f"""{paras([
            "Harborlight plans crews, berths and ferry timetables for small harbours and island operators. "
            "Dispatchers see every vessel, every shift and every certificate on one board, and the crew get their "
            "rosters on their phones.",
            F["/index.html"] + " Today more than four hundred harbours across the Baltic and the North Sea plan "
            "their week with it.",
        ])}
<h2>Where to go next</h2>
<ul>
<li><a href="/pricing.html">Plans and prices</a></li>
<li><a href="/old-pricing">Our old pricing page</a></li>
<li><a href="/docs/setup.html">Setting up the sync agent</a></li>
<li><a href="/docs/faq.html">Frequently asked questions</a></li>
<li><a href="/zh/about.html">关于我们（中文）</a></li>
<li><a href="/blog/post.html">Customer story: Nordfjord Ferries</a></li>
<li><a href="/blog/post-copy.html">Customer story (print version)</a></li>
<li><a href="/changing.html">Support hours</a></li>
<li><a href="/gone.html">Winter promotion</a></li>
<li><a href="/removed.html">Summer promotion (ended)</a></li>
<li><a href="/big.html">The harbour archive</a></li>
<li><a href="/private/secret.html">Partner area</a></li>
<li><a href="/files/brochure.pdf">Download our brochure (PDF)</a></li>
<li><a href="/files/data.bin">Sample roster export (binary)</a></li>
<li><a href="http://10.1.2.3/internal.html">Intranet</a></li>
<li><a href="https://example.org/">Our partner association</a></li>
</ul>""",
    )

    pages["/pricing.html"] = site.page(
        "/pricing.html",
        "Plans and prices",
        f"""{paras([
            "Every plan includes the planning board, the crew app and unlimited vessels. "
            "Prices are per harbour and exclude VAT. You can change plans at any time; the difference is "
            "charged or credited on the next invoice.",
            F["/pricing.html"] + " It is the plan most ferry operators choose.",
        ])}
<table class="plans">
<thead><tr><th>Plan</th><th>Price</th><th>Crew members</th><th>Support</th></tr></thead>
<tbody>
<tr><td>Dinghy</td><td>free</td><td>up to 5</td><td>community forum</td></tr>
<tr><td>Harbor</td><td>49 euros per month</td><td>up to 60</td><td>email, next business day</td></tr>
<tr><td>Fleet</td><td>189 euros per month</td><td>unlimited</td><td>phone, four-hour response</td></tr>
</tbody>
</table>
{paras([
            "Annual billing saves two months on the Harbor and Fleet plans. Harbours owned by a municipality "
            "can pay by invoice instead of card.",
        ])}""",
    )

    pages["/docs/setup.html"] = site.page(
        "/docs/setup.html",
        "Setting up the sync agent",
        f"""{paras([
            "The sync agent copies rosters between Harborlight and the time clock in your harbour office. "
            "Install it on any Windows or Linux machine that stays switched on.",
        ])}
<h2>Before you start</h2>
{paras([
            F["/docs/setup.html"] + " It only makes outgoing connections besides that one listening port.",
            "You need an administrator account in Harborlight and the serial number of your time clock.",
        ])}
<h2>Installing</h2>
<ol><li>Download the installer from the console under Settings, Integrations.</li>
<li>Run it and paste the pairing code shown in the console.</li>
<li>Wait until the console shows the agent as connected; this takes about a minute.</li></ol>""",
    )

    pages["/docs/faq.html"] = site.page(
        "/docs/faq.html",
        "Frequently asked questions",
        f"""<h2>Can I export my rosters?</h2>
{paras(["Yes. Every board can be exported as CSV or as an iCalendar feed that crew can subscribe to."])}
<h2>Do you offer refunds?</h2>
{paras([F["/docs/faq.html"] + " Write to billing and tell us which harbour the subscription was for."])}
<h2>How many vessels can I add?</h2>
{paras(["As many as you like: no plan limits the number of vessels, only the number of crew members."])}
<h2>Does the crew app work offline?</h2>
{paras(["The app keeps the next fourteen days of rosters on the phone and syncs changes when it is back online."])}""",
    )

    pages["/zh/about.html"] = site.page(
        "/zh/about.html",
        "关于我们",
        f"""{paras([
            "Harborlight 是一家为小型港口和渡轮公司提供排班软件的公司。我们的产品帮助调度员安排船员、泊位和航班。",
            F["/zh/about.html"] + "这个团队负责手机应用和离线同步功能。",
            "公司总部位于德国罗斯托克，在北欧和东亚都有客户。我们重视数据安全，所有数据都存放在欧盟境内。",
        ])}""",
        lang="zh-CN",
    )

    post_body = f"""<p class="byline">Published 12 March 2024 by the Harborlight team</p>
{paras([
        "Nordfjord Ferries runs nine vessels between the islands of the Nordfjord and the mainland. "
        "Until last year their dispatchers built the weekly crew plan in a spreadsheet every Thursday.",
        F["/blog/post.html"] + " The dispatchers now spend their Thursdays on the phone with crews instead of "
        "on formulas.",
        "The biggest change, they say, is that certificate expiry dates are checked automatically before a "
        "sailor is put on a shift.",
    ])}"""
    pages["/blog/post.html"] = site.page("/blog/post.html", "How Nordfjord Ferries plans its week", post_body)
    pages["/blog/post-copy.html"] = site.page(
        "/blog/post-copy.html", "How Nordfjord Ferries plans its week", post_body, canonical="/blog/post.html"
    )

    def changing(fact, extra):
        return site.page(
            "/changing.html",
            "Support hours",
            paras(["Our support desk answers by phone and by email.", fact, extra]),
        )

    v1 = changing(F["/changing.html"], "Calls outside these hours go to voicemail.")
    v2 = changing(
        CHANGING_V2_FACT,
        "Calls outside these hours go to voicemail, and we call you back within the next working day.",
    )
    assert len(v1) != len(v2)  # nginx's ETag is mtime-size: a rewrite within one second still changes it
    write(os.path.join(out, "changing.v1.html"), v1)
    write(os.path.join(out, "changing.v2.html"), v2)
    pages["/changing.html"] = v1

    pages["/gone.html"] = site.page(
        "/gone.html",
        "Winter promotion",
        paras([
            "New harbours that sign up before the end of February get a head start.",
            F["/gone.html"] + " Enter it in the console when you choose your plan.",
        ]),
    )

    # /big.html: over 3 MB of text; the fact comes first so a crawler that indexes a truncated
    # page instead of skipping it is caught.
    rng = random.Random(1998)
    words = (
        "harbour lighthouse keeper ferry crossing tide berth quay pilot vessel crew logbook storm "
        "signal lantern island mainland channel buoy anchor harbourmaster record winter summer night"
    ).split()
    chunks, size = [f"<p>{esc(F['/big.html'])}</p>"], 0
    while size < 3_200_000:
        n = rng.randint(40, 90)
        text = " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."
        chunks.append(f"<p>{text}</p>")
        size += len(text) + 8
    pages["/big.html"] = site.page("/big.html", "The harbour archive", "\n".join(chunks))

    pages["/private/secret.html"] = site.page(
        "/private/secret.html",
        "Partner area",
        paras(["This page is for resellers only.", F["/private/secret.html"]]),
    )

    for p, doc in pages.items():
        write(os.path.join(www, p.lstrip("/")), doc)

    # The PDF: fixed creation date so the bytes never change.
    import datetime

    pdf = FPDF()
    pdf.set_creation_date(datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc))
    pdf.set_title("Harborlight brochure")
    pdf.set_author("Harborlight Software GmbH")
    pdf.add_page()
    pdf.set_font("Helvetica", size=18)
    pdf.cell(0, 12, "Harborlight: scheduling for small harbours", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    for t in [
        "Harborlight plans crews, berths and ferry timetables on one board.",
        F["/files/brochure.pdf"] + " Planned maintenance is announced a week ahead.",
        "The crew app runs on Android and iOS and keeps two weeks of rosters offline.",
    ]:
        pdf.multi_cell(0, 7, t, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    write(os.path.join(www, "files/brochure.pdf"), bytes(pdf.output()))

    rb = random.Random(7)
    blob = bytes(rb.randrange(256) for _ in range(4000)) + b"\x00" + F["/files/data.bin"].encode() + b"\x00"
    blob += bytes(rb.randrange(256) for _ in range(4000))
    write(os.path.join(www, "files/data.bin"), blob)

    write(
        os.path.join(www, "robots.txt"),
        f"# Harborlight\nUser-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n",
    )
    write(
        os.path.join(www, "sitemap_index.xml"),
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"  <sitemap>\n    <loc>{base}/sitemap-pages.xml</loc>\n    <lastmod>2024-05-02</lastmod>\n  </sitemap>\n"
        f"  <sitemap>\n    <loc>{base}/sitemap-docs.xml.gz</loc>\n    <lastmod>2024-05-02</lastmod>\n  </sitemap>\n"
        "</sitemapindex>\n",
    )
    write(
        os.path.join(www, "sitemap-pages.xml"),
        urlset(base, ["/index.html", "/pricing.html", "/zh/about.html", "/blog/post.html", "/blog/post-copy.html",
                      "/changing.html", "/gone.html", "/big.html"]),
    )
    # The gzipped one also lists a page that robots.txt forbids: sitemaps do not override robots.
    write(
        os.path.join(www, "sitemap-docs.xml.gz"),
        gz(urlset(base, ["/docs/setup.html", "/docs/faq.html", "/files/brochure.pdf", "/private/secret.html"])),
    )

    shutil.copy(os.path.join(HERE, "nginx.conf.template"), os.path.join(out, "nginx.conf.template"))

    bp = site.boilerplate()

    def entry(path, run1, reason=None, **kw):
        fact, q = SMALL_FACTS.get(path, (None, None))
        e = {"run1": run1}
        if reason:
            e["reason"] = reason
        if fact:
            e["fact"], e["question"] = fact, q
        e.update(kw)
        e.setdefault("run2", run1)
        return e

    expect = {
        "base": base,
        "start": base + "/index.html",
        "outcomes": "indexed | skipped (with reason) | gone. Reasons: robots, redirect-target, canonical "
        "(also called duplicate), too-large, not-html, http-error, private (address), external.",
        "pages": {
            "/index.html": entry("/index.html", "indexed"),
            "/pricing.html": entry("/pricing.html", "indexed", note="also reached through /old-pricing (301)"),
            "/docs/setup.html": entry("/docs/setup.html", "indexed"),
            "/docs/faq.html": entry("/docs/faq.html", "indexed", headings=["Can I export my rosters?", "Do you offer refunds?",
                                                         "How many vessels can I add?",
                                                         "Does the crew app work offline?"]),
            "/zh/about.html": entry("/zh/about.html", "indexed", lang="zh-CN"),
            "/blog/post.html": entry("/blog/post.html", "indexed"),
            "/blog/post-copy.html": entry("/blog/post-copy.html", "skipped", "canonical", alias="duplicate", canonical="/blog/post.html",
                                          note="same text as /blog/post.html; its passages exist once, "
                                               "under /blog/post.html"),
            "/changing.html": entry("/changing.html", "indexed", run2="indexed", run2_fact=CHANGING_V2_FACT,
                                    run2_question="What time does the support desk open on weekdays?",
                                    note="run 2 must find run2_fact and no longer find fact"),
            "/gone.html": entry("/gone.html", "indexed", run2="gone",
                                note="deleted before run 2 (404): its passages and its fact must be gone"),
            "/removed.html": entry("/removed.html", "skipped", "http-error", status=410),
            "/old-pricing": entry("/old-pricing", "skipped", "redirect-target", status=301, redirect_to="/pricing.html"),
            "/big.html": entry("/big.html", "skipped", "too-large", must_not_find_fact=True,
                               note="over 3 MB; the fact is at the top, so a truncated index would find it"),
            "/private/secret.html": entry("/private/secret.html", "skipped", "robots", must_not_fetch=True, must_not_find_fact=True,
                                          note="also listed in sitemap-docs.xml.gz; access.log must not show it"),
            "/files/brochure.pdf": entry("/files/brochure.pdf", "indexed", content_type="application/pdf",
                                         if_pdf_unsupported={"run1": "skipped", "reason": "not-html"}),
            "/files/data.bin": entry("/files/data.bin", "skipped", "not-html", content_type="application/octet-stream",
                                     must_not_find_fact=True),
        },
        "off_site": {
            "http://10.1.2.3/internal.html": {"run1": "skipped", "reason": "private", "must_not_fetch": True},
            "https://example.org/": {"run1": "skipped", "reason": "external", "must_not_fetch": True},
        },
        "sitemaps": ["/sitemap_index.xml", "/sitemap-pages.xml", "/sitemap-docs.xml.gz"],
        "run2": {
            "before": [
                "copy OUT_DIR/changing.v2.html over www/changing.html",
                "delete www/gone.html",
            ],
            "changed": {"/changing.html": {"fact": CHANGING_V2_FACT, "old_fact": F["/changing.html"]}},
            "gone": ["/gone.html"],
            "unchanged": ["/index.html", "/pricing.html", "/docs/setup.html", "/docs/faq.html",
                          "/zh/about.html", "/blog/post.html", "/files/brochure.pdf"],
            "note": "unchanged pages answer 304 to If-None-Match / If-Modified-Since",
        },
        "boilerplate": bp,
    }
    write(os.path.join(out, "expect.json"), json.dumps(expect, ensure_ascii=False, indent=2) + "\n")


# --------------------------------------------------------------------------------------------
# bench: many realistic pages, 30 of which answer one question each
# --------------------------------------------------------------------------------------------

TOPICS = {
    "plans": ["Choosing a plan", "Plan limits", "Upgrading and downgrading", "Annual billing", "Plan comparison",
              "Trial periods"],
    "shipping": ["Shipping rates", "Delivery times", "International shipping", "Same-day dispatch",
                 "Tracking parcels", "Packaging guidelines"],
    "returns": ["Return policy", "Refunds", "Exchanges", "Damaged items", "Return labels", "Restocking"],
    "accounts": ["Creating an account", "Account settings", "Closing an account", "Account ownership",
                 "Login problems", "Store profiles"],
    "security": ["Two-factor login", "Password rules", "Audit logs", "Penetration testing", "Data encryption",
                 "Suspicious activity"],
    "api": ["API keys", "Rate limits", "Webhooks", "API versions", "Pagination", "Error codes"],
    "integrations": ["Accounting integrations", "Email marketing", "Connecting Slack", "Zapier recipes",
                     "Google Sheets sync", "Marketplace connectors"],
    "billing": ["Invoices", "Payment methods", "Taxes and VAT", "Failed payments", "Credits", "Currency"],
    "notifications": ["Email notifications", "Stock alerts", "Order alerts", "Push notifications",
                      "Digest emails", "Quiet hours"],
    "mobile": ["The mobile app", "Scanning barcodes", "Offline mode", "Mobile point of sale", "App updates",
               "Supported devices"],
    "exports": ["Exporting orders", "Store backups", "Data portability", "CSV formats", "Scheduled exports",
                "Deleting data"],
    "team": ["Staff accounts", "Roles and permissions", "Support hours", "Contacting support", "Team invites",
             "Shift handover"],
}
QUALIFIERS = ["a guide for {shops}", "frequently asked questions", "what changed this year", "tips for busy weeks",
              "step by step", "common mistakes", "best practices", "for new merchants", "in detail",
              "a quick overview"]

V = {
    "shop": ["a bakery", "a bike shop", "a bookstore", "a tea merchant", "a print studio", "a ceramics studio",
             "an outdoor gear retailer", "a record shop", "a florist", "a toy store", "a wine merchant"],
    "shops": ["bakeries", "bike shops", "bookstores", "tea merchants", "print studios", "florists",
              "toy stores", "wine merchants", "small fashion labels"],
    "country": ["Germany", "France", "Spain", "Italy", "Canada", "Japan", "Australia", "the Netherlands",
                "Poland", "Portugal", "Ireland", "Sweden"],
    "carrier": ["DHL", "UPS", "FedEx", "PostNL", "Royal Mail", "Colissimo", "GLS", "DPD"],
    "warehouse": ["Leipzig", "Lyon", "Leeds", "Poznań", "Bologna", "Ghent"],
    "time": ["11:00", "12:30", "13:00", "14:00", "16:00", "17:30"],
    "plan": ["Starter", "Harbor", "Summit", "Canopy", "Orchard"],
    "paidplan": ["Harbor", "Summit", "Canopy", "Orchard"],
    "tool": ["QuickBooks", "Slack", "Zapier", "HubSpot", "Google Sheets", "Klaviyo", "Sage", "FreeAgent"],
    "role": ["owner", "manager", "staff member", "accountant", "developer", "shift lead"],
    "feature": ["the order dashboard", "the inventory view", "bulk editing", "the customer list",
                "discount codes", "gift cards", "the product editor", "saved filters", "the sales report"],
    "n": ["two", "three", "four", "five", "six", "a dozen", "several", "a handful of"],
    "days": ["5", "10", "14", "30", "60", "90"],
    "pct": ["10", "15", "20", "25", "50"],
    "item": ["shoes", "jackets", "books", "candles", "prints", "mugs", "bicycles", "plants", "kettles"],
    "method": ["credit card", "PayPal", "bank transfer", "Apple Pay", "Google Pay", "Klarna"],
    "device": ["iPhone", "iPad", "Android phone", "Android tablet", "barcode scanner", "receipt printer"],
}

EN = {
    "plans": [
        "Every plan includes unlimited orders, so a busy season never pushes you into a higher tier.",
        "The {plan} plan suits {shop} that sells online and at markets.",
        "You can switch from the {plan} plan to the {paidplan} plan at any time from the billing page.",
        "When you downgrade, the features of the bigger plan stay active until the end of the billing period.",
        "The {paidplan} plan adds {feature} and priority support.",
        "Annual billing saves roughly {pct} percent compared with paying month by month.",
        "Trials last {days} days and do not need a card.",
        "If you outgrow a plan, we tell you by email before anything changes.",
        "Many {shops} start small and move up once they hire their first staff.",
        "Plan prices do not include VAT, which is added according to your billing country.",
        "Limits on products and staff seats are listed on the plan comparison page.",
    ],
    "shipping": [
        "Parcels to {country} usually travel with {carrier}.",
        "The {warehouse} warehouse hands orders to {carrier} every afternoon.",
        "The {warehouse} warehouse packs orders placed before {time} on the next working day.",
        "Delivery times depend on the carrier, the destination and the season.",
        "You can print shipping labels for {carrier} straight from {feature}.",
        "Tracking numbers are sent to the customer as soon as the label is printed.",
        "Heavy items such as {item} may need a freight service instead of a parcel carrier.",
        "Shipping rates can be flat, weight based or calculated live by {carrier}.",
        "During the holidays, allow {n} extra days for international parcels.",
        "Customs forms for orders outside the EU are filled in automatically.",
        "Same-day dispatch is available when your stock is held in one of our partner warehouses.",
        "Cut-off times for dispatch are shown on each warehouse's page in the console.",
    ],
    "returns": [
        "Customers can start a return from the link in their order confirmation.",
        "Most items can be returned within {days} days if they are unused.",
        "Refunds go back to the original payment method, usually within {n} working days.",
        "Damaged {item} should be photographed before the parcel is sent back.",
        "You decide whether return shipping is paid by you or by the customer.",
        "Exchanges are handled as a return plus a new order, so stock stays correct.",
        "Return labels for {country} can be created with {carrier}.",
        "Restocked items appear in {feature} as soon as the return is marked as received.",
        "Some {shops} charge a restocking fee of {pct} percent for opened items.",
        "Gift cards and personalised items are usually excluded from returns.",
        "A refund can be partial, for example when only one of {n} items comes back.",
    ],
    "accounts": [
        "You can create an account with an email address or with a Google login.",
        "The store {role} can change the account's name, address and logo.",
        "Closing an account deletes its storefront after a grace period.",
        "If you cannot log in, reset your password from the sign-in page.",
        "Each account can hold {n} storefronts under one login.",
        "The account owner is the only person who can close the account.",
        "Store profiles show your opening hours, your address and your return policy.",
        "Changing the email address of an account needs a confirmation from the old address.",
        "Accounts that stop paying are paused, not deleted, for the first {days} days.",
        "A {role} can be given access to billing without seeing customer data.",
    ],
    "security": [
        "Two-factor login can use an authenticator app or a text message.",
        "We recommend turning on two-factor login for every {role}.",
        "The audit log records every change to prices, stock and staff permissions.",
        "All traffic to the console is encrypted with TLS.",
        "Card numbers never reach our servers; the payment processor stores them.",
        "Sign-ins from a new country trigger an email to the account owner.",
        "Password managers work with the console and are the easiest way to use long passwords.",
        "Backups are encrypted and kept in a separate data centre.",
        "We run regular security reviews of {feature} and the public API.",
        "Suspicious logins are blocked after {n} failed attempts.",
        "Audit log entries can be exported for {days} days.",
    ],
    "api": [
        "API keys are created in the console under Settings, Developers.",
        "Each API key can be limited to reading or writing {feature}.",
        "List endpoints return at most 100 items per page and a cursor for the next page.",
        "Errors use standard HTTP status codes and a JSON body with a message.",
        "Webhooks notify your server when an order is paid, shipped or refunded.",
        "Webhook payloads are signed so your server can check they came from us.",
        "Older API versions keep working for a while after a new version is released.",
        "The bulk import endpoint accepts CSV files of up to {days} MB.",
        "Rate limits protect the service; a 429 response tells you to slow down.",
        "A {role} can rotate API keys without downtime by creating the new key first.",
        "Sandbox stores let you test the API without real payments.",
    ],
    "integrations": [
        "The {tool} integration is switched on from the Integrations page.",
        "Orders can be copied to {tool} as soon as they are paid.",
        "Email marketing tools receive customers who ticked the newsletter box.",
        "The {tool} connector runs in the background and reports errors by email.",
        "Marketplace connectors keep stock in sync between your store and the marketplace.",
        "Zapier recipes can post new orders to a chat channel.",
        "Google Sheets sync writes one row per order and updates it when the order changes.",
        "Accounting integrations send invoices, refunds and payouts.",
        "Disconnecting {tool} stops the sync but keeps what was already copied.",
        "Many {shops} connect {tool} in their first week.",
    ],
    "billing": [
        "Invoices are available as PDF on the billing page.",
        "You can pay by {method} or by {method}.",
        "VAT is added according to the country in your billing address.",
        "If a payment fails, we try again after {n} days and email the account owner.",
        "Credits from a downgrade are used up on your next invoices.",
        "Prices can be shown in your customers' currency while you are paid in yours.",
        "A {role} with billing access can download every past invoice.",
        "Invoices list the plan, the period and any add-ons.",
        "Businesses in the EU can enter a VAT number to be billed without VAT.",
        "Payment by {method} is available in most countries.",
    ],
    "notifications": [
        "Email notifications can be turned on or off for each {role}.",
        "Order alerts tell you when a new order is paid.",
        "Stock alerts can be set for each product in {feature}.",
        "Push notifications reach the mobile app within seconds.",
        "Digest emails summarise the day's orders every evening.",
        "Quiet hours stop push notifications at night.",
        "You can send notifications to a shared inbox instead of a person.",
        "Notifications about failed payments always go to the account owner.",
        "Alerts for {item} can be different from alerts for the rest of the catalogue.",
    ],
    "mobile": [
        "The mobile app lets you take orders, check stock and answer customers.",
        "Barcode scanning works with the phone's camera or a Bluetooth {device}.",
        "Offline mode keeps recent orders on the device and syncs them later.",
        "The point of sale mode turns a {device} into a till.",
        "App updates are released every {n} weeks.",
        "Each {role} signs in to the app with their own staff account.",
        "Receipts can be printed on a {device} or sent by email.",
        "The app shows the same {feature} as the console.",
    ],
    "exports": [
        "Orders can be exported as CSV from {feature}.",
        "Store backups include products, customers and orders.",
        "Scheduled exports arrive by email as a download link.",
        "CSV files use UTF-8 and a comma as separator.",
        "Deleting customer data is permanent and cannot be undone.",
        "Exports of large stores are prepared in the background.",
        "A {role} can export data only if their role allows it.",
        "Data portability requests are answered within {days} days.",
        "Exported files include a header row with the field names.",
    ],
    "team": [
        "Staff accounts can be invited by email from the Team page.",
        "Roles decide what each {role} can see and change.",
        "Our support team answers by chat and email on working days.",
        "Shift handover notes are shown to the next {role} who signs in.",
        "Invites expire after {days} days if they are not accepted.",
        "Support is available in English, German and French.",
        "A {role} can be removed from the team at any time; their past actions stay in the audit log.",
        "Phone support is part of the bigger plans.",
        "Many {shops} give each {role} their own login instead of sharing one.",
    ],
}
GENERIC_EN = [
    "If something is unclear, our support team is happy to help.",
    "The console shows a short explanation next to each setting.",
    "Changes take effect immediately unless stated otherwise.",
    "We update this article whenever the product changes.",
    "Screenshots in this article may look slightly different from your console.",
    "Most merchants set this up in a few minutes.",
    "For {shop}, the default settings are usually a good start.",
    "You can undo most changes from the history panel.",
]

ZH_TOPICS = {
    "shipping": ["配送时间", "运费说明", "国际配送"],
    "returns": ["退货政策", "退款说明", "换货流程"],
    "accounts": ["账户设置", "管理员与权限", "注销账户"],
    "security": ["账户安全", "数据备份", "登录保护"],
    "api": ["接口说明", "支付回调", "接口限流"],
}
ZV = {
    "city": ["北京", "上海", "广州", "深圳", "成都", "武汉", "南京", "西安", "重庆"],
    "num": ["三", "五", "七", "十", "十五"],
    "carrier": ["顺丰", "中通", "圆通", "京东物流", "邮政"],
    "role": ["店主", "店长", "客服", "财务", "开发者"],
    "item": ["茶叶", "书籍", "衣服", "鞋子", "杯子", "花卉"],
}
ZH = {
    "shipping": [
        "发往{city}的订单通常由{carrier}承运。",
        "大部分订单在付款后{num}个工作日内发货。",
        "节假日期间，配送时间可能会延长。",
        "偏远地区的运费会比一般地区略高。",
        "客户可以在订单页面查看物流信息。",
        "{item}等大件商品可能需要特殊包装。",
        "国际订单需要填写报关信息。",
    ],
    "returns": [
        "大部分商品支持{num}天无理由退货。",
        "退款会原路返回到客户的付款账户。",
        "商品损坏时，请先拍照再寄回。",
        "换货按照退货加新订单的方式处理。",
        "定制商品一般不支持退货。",
        "退货运费由店铺或客户承担，可以在后台设置。",
        "{item}拆封后是否可以退货，由店铺自行决定。",
    ],
    "accounts": [
        "每个账户可以邀请多名员工，并为他们分配不同的角色。",
        "{role}可以修改店铺名称、地址和标志。",
        "注销账户后，店铺页面会在宽限期后删除。",
        "忘记密码时，可以在登录页面重置。",
        "企业账户可以开具增值税发票。",
        "更换绑定手机号需要验证旧手机号。",
        "{role}只能看到自己权限范围内的数据。",
    ],
    "security": [
        "我们建议每位{role}都开启两步验证。",
        "所有数据在传输过程中都经过加密。",
        "银行卡信息不会保存在我们的服务器上。",
        "异地登录时，系统会向店主发送提醒邮件。",
        "连续{num}次密码错误后，账户会被暂时锁定。",
        "操作日志会记录价格、库存和权限的每一次修改。",
        "备份数据与业务数据分开存放。",
    ],
    "api": [
        "接口密钥可以在后台的开发者设置中创建。",
        "每个密钥可以只授予读取或写入权限。",
        "回调消息带有签名，服务器可以据此验证来源。",
        "请求过于频繁时，接口会返回429状态码。",
        "支付宝支付接口支持沙箱环境测试。",
        "列表接口每页最多返回一百条数据。",
        "旧版本接口在新版本发布后仍会保留一段时间。",
    ],
}
GENERIC_ZH = [
    "如有疑问，请联系我们的客服团队。",
    "后台每个设置旁边都有简短的说明。",
    "除非另有说明，修改会立即生效。",
    "本文会随着产品更新而更新。",
    "大多数商家几分钟内就能完成设置。",
]

# (topic, lang, fact, question, tokens that no other page may contain)
BENCH_FACTS = [
    ("shipping", "en", "Orders to Iceland travel with the carrier Fjallapost and arrive within 9 working days.",
     "How long does delivery to Iceland take, and which carrier is used?", ["Iceland", "Fjallapost"]),
    ("shipping", "en", "The Tilburg warehouse ships every order placed before 15:40 on the same day.",
     "What's the latest I can order for same-day shipping from Tilburg?", ["Tilburg", "15:40"]),
    ("returns", "en", "Opened espresso grinders can be returned within 45 days if the original burr set is included.",
     "Can I send back an espresso grinder I already opened?", ["espresso", "burr set"]),
    ("returns", "en", "For customers in Switzerland, Lumencart pays the return label for parcels up to 12 kg.",
     "Who pays for return shipping from Switzerland?", ["Switzerland", "12 kg"]),
    ("plans", "en", "The Lighthouse plan includes 14 staff seats and costs 79 dollars a month.",
     "How many staff seats do I get with the Lighthouse plan?", ["Lighthouse", "14 staff seats"]),
    ("plans", "en", "Registered charities get 35 percent off any annual plan once they send proof of their status.",
     "Is there a discount on annual plans for charities?", ["charities", "35 percent"]),
    ("plans", "en", "The free Starter plan is limited to 25 products in the catalogue.",
     "How many products can I list on the free Starter plan?", ["25 products"]),
    ("accounts", "en", "An account that has not been used for 26 months is archived and its storefront is taken offline.",
     "What happens to an account that hasn't been used for many months?", ["26 months", "archived"]),
    ("accounts", "en", "To transfer account ownership, both the current and the new owner sign form LC-7 in the console.",
     "How do I hand over ownership of my account to someone else?", ["LC-7"]),
    ("security", "en", "Hardware keys from Yubico and Feitian are accepted as a second factor for login.",
     "Which hardware security keys work for two-factor login?", ["Yubico", "Feitian"]),
    ("security", "en", "Our latest external penetration test was carried out by Grauwacke Labs in March 2024.",
     "Who did your most recent penetration test?", ["Grauwacke"]),
    ("security", "en", "Console passwords must be at least 13 characters long.",
     "How many characters must a console password have at least?", ["13 characters"]),
    ("api", "en", "The REST API allows 240 requests per minute for each API key.",
     "What is the rate limit per API key?", ["240 requests"]),
    ("api", "en", "Failed webhook deliveries are retried 8 times over 19 hours.",
     "How many times do you retry a webhook that failed?", ["19 hours"]),
    ("api", "en", "API version 2019-11 will be switched off on 30 September 2025.",
     "When does the old 2019-11 API version stop working?", ["2019-11"]),
    ("integrations", "en", "The Xero integration syncs invoices every 20 minutes.",
     "How often does the Xero integration sync my invoices?", ["Xero"]),
    ("integrations", "en", "The Mailchimp connector copies at most 50,000 contacts per nightly sync.",
     "Is there a limit on how many contacts go to Mailchimp?", ["Mailchimp", "50,000"]),
    ("billing", "en", "Invoices are issued on the 3rd of each month for the month ahead.",
     "On which day of the month is my invoice issued?", ["3rd of each month"]),
    ("billing", "en", "Customers in Brazil can pay their subscription by Boleto Bancário.",
     "Can I pay with boleto from Brazil?", ["Brazil", "Boleto"]),
    ("notifications", "en", "A low-stock alert is sent when fewer than 7 units of a product remain.",
     "When do I get a low stock alert for a product?", ["fewer than 7 units"]),
    ("mobile", "en", "The mobile app needs at least Android 10 or iOS 15.",
     "Which Android and iOS versions does the mobile app support?", ["Android 10", "iOS 15"]),
    ("exports", "en", "Full store exports stay available for download for 72 hours and are then deleted.",
     "How long can I download my store export before it's deleted?", ["72 hours"]),
    ("team", "en", "The Halifax support team takes phone calls from 06:00 to 14:00 Atlantic time.",
     "What hours is phone support in Halifax open?", ["Halifax", "Atlantic time"]),
    ("team", "en", "Onboarding calls for new merchants are run by Priya Raman or Tomasz Wielgus.",
     "Who will run my onboarding call as a new merchant?", ["Priya Raman", "Wielgus"]),
    ("exports", "en", "Scheduled sales reports can be delivered as CSV at 05:30 every Monday.",
     "Can I have a sales report sent to me every Monday morning?", ["05:30"]),
    ("shipping", "zh", "发往乌鲁木齐的订单由天山快运承运，通常需要六个工作日。",
     "寄到乌鲁木齐要多长时间，用哪家快递？", ["乌鲁木齐", "天山快运"]),
    ("returns", "zh", "在中国大陆购买的商品可以在三十天内无理由退货。",
     "在中国大陆买的东西多少天内能无理由退？", ["三十天"]),
    ("accounts", "zh", "每个企业账户最多可以添加十二位管理员。",
     "企业账户能设置几个管理员？", ["十二位"]),
    ("security", "zh", "我们的数据存放在杭州的两个机房，并且每四小时备份一次。",
     "你们的数据多久备份一次，存在哪里？", ["杭州", "每四小时"]),
    ("api", "zh", "微信支付接口的回调超时时间为八秒。",
     "微信支付回调多长时间算超时？", ["微信支付", "八秒"]),
]


def bench_site(base):
    nav = [("Home", "/index.html")]
    return Site(
        name="Lumencart",
        tagline="Commerce tools for independent shops",
        nav=nav,  # filled in by make_bench with the hub pages
        cookie="We use cookies to keep you signed in and to measure how our help pages are used. By continuing you agree to our cookie policy.",
        sidebar_title="Need more help from the Lumencart team?",
        sidebar_lines=[
            "Our support team replies within one business day.",
            "Join the Lumencart community forum to swap tips with other merchants.",
            "Check the status page for planned maintenance and incidents.",
        ],
        footer_copy="© 2024 Lumencart Ltd, registered in England and Wales, company number 09876543. All rights reserved.",
        footer_links=[("Home", "/index.html"), ("Sitemap", "/sitemap.xml")],
        base=base,
    )


def fill(rng, template, vocab):
    out, i = [], 0
    while True:
        j = template.find("{", i)
        if j < 0:
            out.append(template[i:])
            return "".join(out)
        k = template.index("}", j)
        out.append(template[i:j])
        out.append(rng.choice(vocab[template[j + 1:k]]))
        i = k + 1


def make_bench(out, base, n_pages):
    t0 = time.monotonic()
    if n_pages < 60:
        sys.exit("bench needs --pages 60 or more (30 of them answer the questions)")
    www = os.path.join(out, "www")
    if os.path.exists(www):
        shutil.rmtree(www)
    rng = random.Random(20240502)
    site = bench_site(base)

    # Page 0 is /index.html; 1..10 are its hubs (one per topic, listed in the nav); the rest hang
    # off a 10-ary tree (page i's children are 10i+1..10i+10), so every page is at most
    # log10(N) hops from the home page, plus random cross links.
    en_topics = list(TOPICS)
    zh_topics = list(ZH_TOPICS)
    n_zh = max(5, n_pages // 10)
    zh_ids = set(rng.sample(range(11, n_pages), n_zh))
    pages = []  # dicts: id, lang, topic, title, path
    for i in range(n_pages):
        if i == 0:
            pages.append({"id": 0, "lang": "en", "topic": None, "title": "Lumencart Help Center", "path": "/index.html"})
            continue
        if i in zh_ids:
            topic = zh_topics[i % len(zh_topics)]
            sub = rng.choice(ZH_TOPICS[topic])
            title = f"{sub}：{rng.choice(['常见问题', '详细说明', '商家指南', '快速入门'])}"
            path = f"/zh/{topic}/article-{i}.html"
            lang = "zh"
        else:
            topic = en_topics[(i - 1) % len(en_topics)] if i <= 10 else rng.choice(en_topics)
            sub = rng.choice(TOPICS[topic])
            qual = fill(rng, rng.choice(QUALIFIERS), V)
            title = f"{sub}: {qual}" if i > 10 else f"{topic.capitalize()}: overview"
            slug = "".join(c if c.isalnum() else "-" for c in sub.lower()).strip("-")
            path = f"/{topic}/{slug}-{i}.html" if i > 10 else f"/{topic}/index.html"
            lang = "en"
        pages.append({"id": i, "lang": lang, "topic": topic, "title": title, "path": path})
    hubs = pages[1:11]
    site.nav = [("Home", "/index.html")] + [(p["topic"].capitalize(), p["path"]) for p in hubs]

    # Answer pages: English ones on their topic among the non-hub English pages, Chinese ones
    # among the Chinese pages of their topic.
    answers = {}
    used = set()
    for fi, (topic, lang, fact, q, toks) in enumerate(BENCH_FACTS):
        cands = [p["id"] for p in pages[11:] if p["lang"] == lang and p["topic"] == topic and p["id"] not in used]
        if not cands:
            cands = [p["id"] for p in pages[11:] if p["lang"] == lang and p["id"] not in used]
        pid = rng.choice(cands)
        used.add(pid)
        answers[pid] = fi

    all_tokens = [t for f in BENCH_FACTS for t in f[4]]
    manifest_paths = []
    total = 0
    for p in pages:
        i = p["id"]
        kids = list(range(10 * i + 1, min(10 * i + 11, n_pages))) if i else list(range(1, min(11, n_pages)))
        links = ([(i - 1) // 10] if i else []) + kids
        while len(links) < 10:
            j = rng.randrange(n_pages)
            if j != i and j not in links:
                links.append(j)
        body = render_body(rng, p, answers.get(i), hubs)
        rel = "\n".join(f'<li><a href="{pages[j]["path"]}">{esc(pages[j]["title"])}</a></li>' for j in links)
        body += f'\n<section class="related">\n<h2>{"相关文章" if p["lang"] == "zh" else "Related articles"}</h2>\n<ul>\n{rel}\n</ul>\n</section>'
        doc = site.page(p["path"], p["title"], body, lang="zh-CN" if p["lang"] == "zh" else "en")
        if i in answers:
            assert BENCH_FACTS[answers[i]][2] in doc
        else:
            for t in all_tokens:
                assert t not in doc, (t, p["path"])
        data = doc.encode("utf-8")
        total += len(data)
        write(os.path.join(www, p["path"].lstrip("/")), data)
        manifest_paths.append(p["path"])

    write(os.path.join(www, "sitemap.xml"), urlset(base, manifest_paths))
    write(os.path.join(www, "robots.txt"),
          f"User-agent: *\nDisallow: /drafts/\nDisallow: /cart\n\nSitemap: {base}/sitemap.xml\n")
    questions = [
        {"question": q, "answer_path": pages[pid]["path"], "fact": fact, "lang": lang, "key_tokens": toks}
        for pid, fi in sorted(answers.items(), key=lambda kv: kv[1])
        for (topic, lang, fact, q, toks) in [BENCH_FACTS[fi]]
    ]
    write(os.path.join(out, "questions.json"), json.dumps(questions, ensure_ascii=False, indent=2) + "\n")
    bp = site.boilerplate()
    write(os.path.join(out, "boilerplate.json"), json.dumps(bp, ensure_ascii=False, indent=2) + "\n")
    shutil.copy(os.path.join(HERE, "nginx.conf.template"), os.path.join(out, "nginx.conf.template"))
    print(f"bench: {n_pages} pages, {total} bytes of HTML, {time.monotonic() - t0:.2f} s", file=sys.stderr)


PREFIX_EN = ["", "", "", "", "In most cases, ", "For example, ", "As a rule, ", "In practice, ", "Good to know: ",
             "If you run {shop}, ", "Note that ", "Usually, ", "On the bigger plans, ", "Once set up, "]
SUFFIX_EN = ["", "", "", "", "", " This is especially useful during busy weeks.", " Ask support if you are unsure.",
             " The console explains each option.", " Most {shops} leave the default as it is.",
             " You can change this later.", " It works the same in the mobile app."]
PREFIX_ZH = ["", "", "", "一般来说，", "需要注意的是，", "例如，", "对于{role}来说，", "在大多数情况下，", "另外，"]
SUFFIX_ZH = ["", "", "", "", "如有需要，可以随时修改。", "具体选项可在后台查看。", "这一点在促销期间尤为重要。"]


class Writer:
    """Sentences for one page: no template twice within the last few, a prefix or suffix now
    and then, so paragraphs read less like a loop."""

    def __init__(self, rng, zh):
        self.rng, self.zh, self.recent = rng, zh, []

    def sentence(self, pool):
        rng = self.rng
        for _ in range(8):
            t = rng.choice(pool)
            if t not in self.recent:
                break
        self.recent = (self.recent + [t])[-6:]
        vocab = ZV if self.zh else V
        body = fill(rng, t, vocab)
        pre = fill(rng, rng.choice(PREFIX_ZH if self.zh else PREFIX_EN), vocab)
        suf = fill(rng, rng.choice(SUFFIX_ZH if self.zh else SUFFIX_EN), vocab)
        if pre and not self.zh and not body.startswith(("API ", "VAT ", "CSV ", "Zapier ", "Google ")):
            body = body[0].lower() + body[1:]
        return pre + body + suf

    def paragraph(self, pools, weights):
        n = self.rng.randint(3, 6)
        sents = [self.sentence(self.rng.choices(pools, weights)[0]) for _ in range(n)]
        return ("" if self.zh else " ").join(sents)


def render_body(rng, p, fact_index, hubs=()):
    zh = p["lang"] == "zh"
    w = Writer(rng, zh)
    if p["id"] == 0:
        parts = [paras([
            "Welcome to the Lumencart Help Center. Find answers about plans, shipping, returns, accounts, "
            "security, the API, integrations, billing, notifications, the mobile app, exports and your team.",
            " ".join(w.sentence(GENERIC_EN) for _ in range(4)),
        ])]
        for h in hubs:
            parts.append(f'<h2><a href="{h["path"]}">{esc(h["topic"].capitalize())}</a></h2>')
            parts.append(paras([w.paragraph([EN[h["topic"]]], [1])]))
        return "\n".join(parts)
    topic = p["topic"]
    if zh:
        pools, weights = [ZH[topic], GENERIC_ZH, ZH[rng.choice(list(ZH))]], [70, 15, 15]
        target = rng.randint(1000, 2000)  # characters
        heads = ZH_TOPICS[topic]
    else:
        # Mostly the page's topic, some generic lines, some from a neighbouring topic.
        pools = [EN[topic], GENERIC_EN, EN[rng.choice(list(EN))], EN[rng.choice(list(EN))]]
        weights = [70, 12, 9, 9]
        target = rng.randint(560, 1230)  # words
        heads = TOPICS[topic]
    count = 0
    sections = []
    n_sec = rng.randint(4, 7)
    for s in range(n_sec):
        ps = []
        for _ in range(rng.randint(2, 4)):
            para = w.paragraph(pools, weights)
            ps.append(para)
            count += len(para) if zh else para.count(" ") + 1
        if s == 0:
            sections.append(("", ps))
        elif zh:
            sections.append((rng.choice(heads), ps))
        else:
            tail = rng.choice(["details", "examples", "limits", "how it works", "what to check", "before you start"])
            sections.append((f"{rng.choice(heads)}: {tail}", ps))
        if count >= target:
            break
    while count < target:
        para = w.paragraph(pools, weights)
        sections[-1][1].append(para)
        count += len(para) if zh else para.count(" ") + 1
    if fact_index is not None:
        fact = BENCH_FACTS[fact_index][2]
        si = rng.randrange(1, len(sections)) if len(sections) > 1 else 0
        ps = sections[si][1]
        pi = rng.randrange(len(ps))
        ps[pi] = ps[pi] + ("" if zh else " ") + fact
    parts = []
    for h, ps in sections:
        if h:
            parts.append(f"<h2>{esc(h)}</h2>")
        parts.append(paras(ps))
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["small", "bench"])
    ap.add_argument("out_dir")
    ap.add_argument("--base", default=PLACEHOLDER, help="the site's origin, e.g. http://127.0.0.1:8080 (no slash at the end)")
    ap.add_argument("--pages", type=int, default=1000, help="bench only: how many pages")
    a = ap.parse_args()
    base = a.base.rstrip("/")
    os.makedirs(a.out_dir, exist_ok=True)
    if a.mode == "small":
        make_small(a.out_dir, base)
    else:
        make_bench(a.out_dir, base, a.pages)


if __name__ == "__main__":
    main()
