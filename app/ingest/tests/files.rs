//! `read_file` on files made by the real tools (tests/fixtures/make_fixtures.py).

use parley_ingest::{Document, Read, Snippet, read_file};

fn bytes(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/files/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn document(name: &str) -> Document {
    match read_file(name, &bytes(name)) {
        Ok(Read::Document(doc)) => doc,
        other => panic!("{name}: {other:?}"),
    }
}

fn error(name: &str, bytes: &[u8]) -> String {
    match read_file(name, bytes) {
        Err(e) => e.to_string(),
        Ok(read) => panic!("{name} was read: {read:?}"),
    }
}

#[test]
fn pdf_with_chinese_and_english_from_fpdf2() {
    let doc = document("guide.pdf");
    assert_eq!(doc.title, "Parley Pricing Guide", "from the PDF's metadata");
    for line in [
        "The basic plan costs 10 dollars a month and includes three agents.",
        "退款政策：购买后十四天内可以全额退款。",
        "客服工作时间为周一至周五，上午九点到下午六点。",
    ] {
        assert!(doc.markdown.contains(line), "{line:?} missing from:\n{}", doc.markdown);
    }
}

#[test]
fn pdf_with_a_cid_font_from_reportlab() {
    let doc = document("cid.pdf");
    assert_eq!(doc.title, "cid", "no metadata title: the file name");
    assert!(doc.markdown.contains("营业时间：每天九点开门。"), "{}", doc.markdown);
    assert!(doc.markdown.contains("Opening hours: nine every day."), "{}", doc.markdown);
}

#[test]
fn docx_headings_lists_and_table() {
    let doc = document("handbook.docx");
    assert_eq!(doc.title, "Support Handbook");
    for line in [
        "# Support Handbook",
        "This handbook explains how the support team answers customers.",
        "## Channels\n\n- Email within one day\n- Chat during office hours",
        "## Escalation\n\n1. Check the order number\n1. Ask a team lead",
        "| Plan | Price |\n| --- | --- |\n| Basic | $10 |\n| Team | $30 |",
        "中文段落：我们支持微信支付。",
    ] {
        assert!(doc.markdown.contains(line), "{line:?} missing from:\n{}", doc.markdown);
    }
}

#[test]
fn csv_of_questions_and_answers() {
    let Ok(Read::Snippets(snippets)) = read_file("faq.csv", &bytes("faq.csv")) else { panic!("faq.csv not read") };
    let pair = |q: &str, a: &str| Snippet { question: q.to_owned(), answer: a.to_owned() };
    assert_eq!(
        snippets,
        [
            pair("How do I reset my password?", "Use the link on the sign-in page."),
            pair("Do you ship abroad, too?", "Yes, to 30 countries."),
            pair("可以开发票吗？", "可以，请在订单页面申请。"),
        ]
    );
    assert_eq!(error("bad.csv", &bytes("bad.csv")), "bad.csv: line 3 has no answer");
}

#[test]
fn markdown_with_front_matter_and_text() {
    let doc = document("notes.md");
    assert_eq!(doc.title, "Release Notes");
    assert_eq!(doc.markdown, "# Version 2\n\n- Faster answers\n- Chinese support");
    let doc = document("opening-hours.txt");
    assert_eq!(doc.title, "opening-hours");
    assert_eq!(doc.markdown, "We are open Monday to Friday, 9:00 to 18:00.\n\nClosed on public holidays.");
    assert_eq!(doc.lang.as_deref(), Some("en"));
}

#[test]
fn html_upload_uses_the_page_extraction() {
    let html = std::fs::read(format!("{}/tests/fixtures/zh.html", env!("CARGO_MANIFEST_DIR"))).unwrap_or_default();
    let Ok(Read::Document(doc)) = read_file("REFUND.HTML", &html) else { panic!("not read") };
    assert_eq!(doc.title, "退款政策 - 示例商城");
    assert!(doc.markdown.contains("## 如何申请退款") && !doc.markdown.contains("首页"));
    assert_eq!(doc.lang.as_deref(), Some("zh-CN"));
}

#[test]
fn bad_files_are_named_in_the_error() {
    assert_eq!(
        error("setup.exe", &bytes("setup.exe")),
        "setup.exe: not a supported type (PDF, DOCX, HTML, Markdown, text, CSV)"
    );
    assert!(error("broken.pdf", &bytes("broken.pdf")).starts_with("broken.pdf: not a readable PDF file ("));
    assert_eq!(error("scan.pdf", &bytes("scan.pdf")), "scan.pdf: no text layer (a scanned PDF?)");
    assert!(error("letter.docx", b"PK\x03\x04 not really a zip").starts_with("letter.docx: not a readable DOCX file"));
    assert_eq!(error("empty.txt", b" \n"), "empty.txt: the file is empty");
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x2545_f491_u32;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                seed as u8
            })
            .collect()
    };
    let guide = bytes("guide.pdf");
    let docx = bytes("handbook.docx");
    let mut cut_pdf = guide[..guide.len() / 2].to_vec();
    cut_pdf.extend(noise(300));
    let inputs = [
        ("a.pdf", b"%PDF-1.7\n".iter().copied().chain(noise(4000)).collect::<Vec<_>>()),
        ("b.pdf", cut_pdf),
        ("c.docx", docx[..docx.len() / 2].to_vec()),
        ("d.docx", b"PK\x03\x04".iter().copied().chain(noise(4000)).collect()),
        ("e.csv", noise(500)),
        ("f.txt", noise(500)),
        ("g.html", noise(500)),
        ("h.md", noise(500)),
        ("noext", noise(500)),
        ("", vec![]),
    ];
    for (name, data) in inputs {
        let _ = read_file(name, &data);
    }
}
