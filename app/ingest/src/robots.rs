//! `robots.txt`: which URLs a crawler may fetch, how slowly, and where the sitemaps are.
//!
//! A wrapper over `texting_robots`, kept rather than hand-written: the format has more corners
//! than it looks (agent groups, longest-match precedence between `Allow` and `Disallow`, `*` and
//! `$` patterns, percent-encoding, `Crawl-delay`, BOMs and junk lines), and that crate is tested
//! against Google's robots.txt test suite and a crawl of real files. The wrapper pins the policy
//! around it: a file that does not parse, like a missing one, allows everything.

use texting_robots::Robot;
use url::Url;

/// The rules of one site's `robots.txt` for one user agent.
#[derive(Debug, Default)]
pub struct Robots {
    /// `None` allows everything.
    robot: Option<Robot>,
}

impl Robots {
    /// The rules of `body` for `user_agent` (its group, else the `*` group). A body that does
    /// not parse allows everything, as a missing file does.
    pub fn parse(user_agent: &str, body: &[u8]) -> Robots {
        Robots { robot: Robot::new(user_agent, body).ok() }
    }

    /// No rules: for a site without `robots.txt` (a 404) or whose file could not be fetched.
    pub fn allow_all() -> Robots {
        Robots { robot: None }
    }

    /// Whether the rules let the user agent fetch `url` (only its path and query are looked at).
    pub fn allows(&self, url: &Url) -> bool {
        self.robot.as_ref().is_none_or(|robot| robot.allowed(url.as_str()))
    }

    /// The `Sitemap:` lines that are absolute http(s) URLs, in order.
    pub fn sitemaps(&self) -> Vec<Url> {
        let Some(robot) = &self.robot else { return Vec::new() };
        robot
            .sitemaps
            .iter()
            .filter_map(|s| Url::parse(s.trim()).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .collect()
    }

    /// The `Crawl-delay` in seconds that applies to the user agent, if any.
    pub fn crawl_delay(&self) -> Option<f32> {
        self.robot.as_ref().and_then(|robot| robot.delay).filter(|d| d.is_finite() && *d >= 0.0)
    }
}
