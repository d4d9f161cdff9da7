//! The demo content shipped with Parley (written for the demo, not official advice): Hong Kong
//! immigration articles and news for the seeded immigration agent. See `app/engine/data/README.md`.

/// Knowledge articles (markdown with front matter), one entry a file of `app/engine/data/knowledge/`.
pub const ARTICLES: &[(&str, &str)] = &[
    ("cies-eligibility.md", include_str!("../data/knowledge/cies-eligibility.md")),
    ("cies-process-timeline.md", include_str!("../data/knowledge/cies-process-timeline.md")),
    ("cies-stay-extension.md", include_str!("../data/knowledge/cies-stay-extension.md")),
    ("exp-cies-asset-planning.md", include_str!("../data/knowledge/exp-cies-asset-planning.md")),
    ("exp-gep-job-description-match.md", include_str!("../data/knowledge/exp-gep-job-description-match.md")),
    ("exp-iang-employment-evidence.md", include_str!("../data/knowledge/exp-iang-employment-evidence.md")),
    ("exp-stem-masters-ttps-vs-qmas.md", include_str!("../data/knowledge/exp-stem-masters-ttps-vs-qmas.md")),
    ("exp-techtas-quota-planning.md", include_str!("../data/knowledge/exp-techtas-quota-planning.md")),
    ("gep-eligibility.md", include_str!("../data/knowledge/gep-eligibility.md")),
    ("gep-process-documents.md", include_str!("../data/knowledge/gep-process-documents.md")),
    ("gep-stay-extension.md", include_str!("../data/knowledge/gep-stay-extension.md")),
    ("iang-eligibility.md", include_str!("../data/knowledge/iang-eligibility.md")),
    ("iang-extension.md", include_str!("../data/knowledge/iang-extension.md")),
    ("iang-process-documents.md", include_str!("../data/knowledge/iang-process-documents.md")),
    ("qmas-eligibility.md", include_str!("../data/knowledge/qmas-eligibility.md")),
    ("qmas-points-tests.md", include_str!("../data/knowledge/qmas-points-tests.md")),
    ("qmas-process-timeline.md", include_str!("../data/knowledge/qmas-process-timeline.md")),
    ("qmas-stay-extension.md", include_str!("../data/knowledge/qmas-stay-extension.md")),
    ("techtas-eligibility.md", include_str!("../data/knowledge/techtas-eligibility.md")),
    ("techtas-process-timeline.md", include_str!("../data/knowledge/techtas-process-timeline.md")),
    ("ttps-categories.md", include_str!("../data/knowledge/ttps-categories.md")),
    ("ttps-dependants.md", include_str!("../data/knowledge/ttps-dependants.md")),
    ("ttps-extension-renewal.md", include_str!("../data/knowledge/ttps-extension-renewal.md")),
    ("ttps-process-timeline.md", include_str!("../data/knowledge/ttps-process-timeline.md")),
];

/// News items (JSON array).
pub const NEWS: &str = include_str!("../data/news.json");
