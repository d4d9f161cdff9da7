//! The demo content shipped with Parley (written for the demo, not official advice): Hong Kong
//! immigration articles and news for the seeded immigration agent, and its domain (the schemes
//! with their prices, the official sites, the reference news). See `app/engine/data/README.md`.

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

/// The demo immigration agent's schemes with the assessment's price (CNY), the official sites it
/// points to, and its reference news, typed as an owner types them in the console (migration
/// 0035 gives the same to an immigration agent created before agents had them).
pub const IMMIGRATION_SERVICES: &str = "\
TTPS | 高端人才通行证计划（高才通） | 99.00 | CNY | 高才通, 高端人才
QMAS | 优秀人才入境计划（优才） | 99.00 | CNY | 优才, 優才, 优秀人才
GEP | 一般就业政策（专才） | 99.00 | CNY | 专才, 專才, 一般就业
IANG | 非本地毕业生留港/回港就业安排 | 79.00 | CNY | 留学, 非本地毕业生, 毕业生留港
CIES | 新资本投资者入境计划 | 199.00 | CNY | 投资移民, 资本投资, 投資移民
TECHTAS | 科技人才入境计划 | 99.00 | CNY | 科技人才";

/// See [`IMMIGRATION_SERVICES`].
pub const IMMIGRATION_SITES: &str = "\
香港入境事务处 | https://www.immd.gov.hk
香港人才服务窗口 | https://www.talentservicewindow.gov.hk
投资推广署 | https://www.investhk.gov.hk";

/// See [`IMMIGRATION_SERVICES`].
pub const IMMIGRATION_REFERENCE_NEWS: &str = "\
QMAS | 优才计划全年接受申请 | 优才计划面向具备专业技能或杰出成就的人士，全年接受申请，按入境处公布的评核准则甄选。
GEP | 专才计划需具备确认的工作聘约 | 一般就业政策（专才）申请人须已获香港雇主聘用，职位与学历或经验相关，薪酬福利须符合市场水平。
IANG | 非本地毕业生可申请留港或回港就业 | 在香港修读全日制经评审学位课程的非本地毕业生，可按安排申请留港或回港就业，具体期限以入境处公布为准。
TTPS | 高才通计划按三类准则受理申请 | 高端人才通行证计划按年收入或合资格大学学历及工作经验分为A、B、C三类，C类设有年度名额。
CIES | 新资本投资者入境计划持续接受申请 | 申请人须在香港投资指定金额的获许投资资产，其中部分须注入资本投资者入境计划投资组合。
TECHTAS | 科技人才入境计划以配额方式运作 | 合资格科技公司或机构可申请配额，为指定科技范畴输入非本地科研人才。";
