//! Known visitors (issue 16): the host site's signed identity verified, and a browser linked to
//! the user it names (see [`crate::store::identity`] for how the data follows the user).

use base64::Engine as _;
use parley_protocol::{ApiCode, Identified, IdentifiedUser};
use serde::Deserialize;

use super::Engine;
use super::relay::Live;
use crate::store::agents::Agent;
use crate::store::identity::{self, Claimed, SecretInfo};
use crate::store::visitors::{self, Visitor};
use crate::store::{DbError, agents};

/// Clock skew allowed between the host site's server and this one, in seconds.
pub const LEEWAY_SECS: i64 = 60;
/// Longest user id, name and email taken from a token.
const MAX_SUBJECT: usize = 200;
const MAX_NAME: usize = 200;
const MAX_EMAIL: usize = 320;
/// How long a replaced secret is still accepted by default, in hours.
pub const DEFAULT_GRACE_HOURS: i64 = parley_protocol::IDENTITY_GRACE_HOURS;
/// The longest grace period of a rotation, in hours (30 days).
pub const MAX_GRACE_HOURS: i64 = 30 * 24;

/// Why a token was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IdentityError {
    #[error("This agent has no identity secret yet: create one in the console or with `parley identity-secret`.")]
    NotConfigured,
    #[error("The identity token is not a well-formed JWT.")]
    Malformed,
    #[error("The identity token lacks a valid `{0}` claim.")]
    Claim(String),
    #[error("The identity token was issued in the future (check the server's clock).")]
    NotYet,
    #[error("The identity token must be signed with HS256, not `{0}`.")]
    Algorithm(String),
    #[error("The identity token's signature matches none of this agent's identity secrets.")]
    Signature,
    #[error("The identity token has expired.")]
    Expired,
    #[error("The identity token is for another agent: its `aud` must be this agent's key.")]
    Audience,
    #[error("The identity token lives longer than this agent accepts ({0} s from `iat` to `exp`).")]
    Lifetime(i64),
    #[error("The identity token was used already: its `jti` is accepted once.")]
    Replayed,
}

impl IdentityError {
    /// The code the API answers with.
    pub fn code(&self) -> ApiCode {
        match self {
            IdentityError::NotConfigured => ApiCode::IdentityNotConfigured,
            IdentityError::Malformed | IdentityError::Claim(_) | IdentityError::NotYet | IdentityError::Replayed => {
                ApiCode::IdentityInvalid
            }
            IdentityError::Algorithm(_) => ApiCode::IdentityAlgorithm,
            IdentityError::Signature => ApiCode::IdentitySignature,
            IdentityError::Expired => ApiCode::IdentityExpired,
            IdentityError::Audience => ApiCode::IdentityAudience,
            IdentityError::Lifetime(_) => ApiCode::IdentityLifetime,
        }
    }
}

/// Identifying failed: the token was refused, or the database failed.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyError {
    #[error(transparent)]
    Refused(#[from] IdentityError),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The claims Parley reads (any others are ignored).
#[derive(Deserialize)]
struct RawClaims {
    sub: Option<String>,
    exp: Option<i64>,
    iat: Option<i64>,
    #[serde(default)]
    nbf: Option<i64>,
    #[serde(default)]
    jti: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    email: Option<String>,
}

/// The `alg` of a token's header, read before anything else (so that `none` or an unknown
/// algorithm gets its own answer, not a parse error).
fn header_alg(token: &str) -> Result<String, IdentityError> {
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(IdentityError::Malformed);
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header.trim_end_matches('='))
        .map_err(|_| IdentityError::Malformed)?;
    let header: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| IdentityError::Malformed)?;
    Ok(header.get("alg").and_then(|a| a.as_str()).unwrap_or("").to_owned())
}

fn optional_text(value: Option<String>, max: usize, claim: &str) -> Result<Option<String>, IdentityError> {
    match value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        Some(v) if v.chars().count() > max => Err(IdentityError::Claim(claim.to_owned())),
        other => Ok(other),
    }
}

/// Longest `jti` taken from a token.
const MAX_JTI: usize = 200;

/// A token that verified: who it names, and its `jti` (accepted once) and `exp` (seconds).
#[derive(Debug, PartialEq)]
pub struct Verified {
    pub claimed: Claimed,
    pub jti: Option<String>,
    pub exp: i64,
}

/// Verifies a host site's token against the agent's secrets (`secrets`, the current first):
/// HS256 only, the signature, `aud` = `audience`, `exp` not past and `iat` and `nbf` not ahead
/// (with [`LEEWAY_SECS`]), and a lifetime of at most `max_age_secs`. (That its `jti` was not
/// used before is the caller's to check: it takes the database.)
pub fn verify(
    token: &str,
    secrets: &[String],
    audience: &str,
    max_age_secs: i64,
    now_secs: i64,
) -> Result<Verified, IdentityError> {
    use jsonwebtoken::errors::ErrorKind;
    if secrets.is_empty() {
        return Err(IdentityError::NotConfigured);
    }
    super::jwt_crypto::install();
    let token = token.trim();
    let alg = header_alg(token)?;
    if alg != "HS256" {
        return Err(IdentityError::Algorithm(if alg.is_empty() { "(none given)".into() } else { alg }));
    }
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    // Times are checked below against the engine's clock.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    // (A token without `aud` would otherwise pass the audience check.)
    validation.set_required_spec_claims(&["aud"]);
    validation.set_audience(&[audience]);
    let mut claims = None;
    for secret in secrets {
        let key = jsonwebtoken::DecodingKey::from_secret(secret.as_bytes());
        match jsonwebtoken::decode::<RawClaims>(token, &key, &validation) {
            Ok(data) => {
                claims = Some(data.claims);
                break;
            }
            Err(e) => match e.kind() {
                ErrorKind::InvalidSignature => continue,
                ErrorKind::InvalidAudience => return Err(IdentityError::Audience),
                ErrorKind::MissingRequiredClaim(c) if c == "aud" => return Err(IdentityError::Audience),
                ErrorKind::MissingRequiredClaim(c) | ErrorKind::InvalidClaimFormat(c) => {
                    return Err(IdentityError::Claim(c.clone()));
                }
                ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName | ErrorKind::MissingAlgorithm => {
                    return Err(IdentityError::Algorithm(alg));
                }
                _ => return Err(IdentityError::Malformed),
            },
        }
    }
    let claims = claims.ok_or(IdentityError::Signature)?;
    let exp = claims.exp.ok_or_else(|| IdentityError::Claim("exp".into()))?;
    let iat = claims.iat.ok_or_else(|| IdentityError::Claim("iat".into()))?;
    if exp.saturating_add(LEEWAY_SECS) < now_secs {
        return Err(IdentityError::Expired);
    }
    if iat > now_secs.saturating_add(LEEWAY_SECS)
        || claims.nbf.is_some_and(|nbf| nbf > now_secs.saturating_add(LEEWAY_SECS))
    {
        return Err(IdentityError::NotYet);
    }
    if exp.saturating_sub(iat) > max_age_secs {
        return Err(IdentityError::Lifetime(max_age_secs));
    }
    let subject = optional_text(claims.sub, MAX_SUBJECT, "sub")?.ok_or_else(|| IdentityError::Claim("sub".into()))?;
    let claimed = Claimed {
        subject,
        name: optional_text(claims.name, MAX_NAME, "name")?,
        email: optional_text(claims.email, MAX_EMAIL, "email")?,
    };
    Ok(Verified { claimed, jti: optional_text(claims.jti, MAX_JTI, "jti")?, exp })
}

impl Engine {
    /// Verifies the host site's token and links the visitor's browser to the user it names.
    pub async fn identify(&self, agent: &Agent, visitor: &Visitor, token: &str) -> Result<Identified, IdentifyError> {
        let now = self.now_ms();
        let secrets = identity::valid_secrets(self.db(), &agent.id, now).await?;
        let verified = verify(token, &secrets, &agent.public_key, agent.identity.max_age_secs, now.div_euclid(1000))?;
        // A token with a `jti` is good once: a copy replayed from another browser is refused.
        if let Some(jti) = &verified.jti {
            let expires_at = (verified.exp + LEEWAY_SECS).saturating_mul(1000);
            if !identity::use_jti(self.db(), &agent.id, jti, expires_at, now).await? {
                return Err(IdentityError::Replayed.into());
            }
        }
        let claimed = verified.claimed;
        let link = || {
            identity::link(
                self.db(),
                &agent.id,
                &visitor.token_id,
                &visitor.id,
                visitor.host_origin.as_deref(),
                &claimed,
                now,
            )
        };
        let linked = match link().await {
            // Two browsers of a new user identified at the same moment: the other one created
            // the user first (a unique key refused this one); link to it.
            Err(DbError::Database(e)) if e.is_unique_violation() => link().await?,
            other => other?,
        };
        if linked.new_token.is_some() || !visitor.is_identified() {
            self.visitor_token_changed(&visitor.token_id);
        }
        let conversation_id = identity::latest_conversation(self.db(), &agent.id, &linked.user.visitor_id).await?;
        metrics::counter!("parley_identified_total").increment(1);
        Ok(Identified {
            user: IdentifiedUser { id: linked.user.subject, name: linked.user.name, email: linked.user.email },
            token: linked.new_token,
            conversation_id,
        })
    }

    /// Signs one browser out: its token stops working; the user's data stays theirs.
    pub async fn sign_out_visitor(&self, visitor: &Visitor) -> Result<(), DbError> {
        visitors::revoke_token(self.db(), &visitor.token_id, self.now_ms()).await?;
        self.visitor_token_changed(&visitor.token_id);
        Ok(())
    }

    /// A new identity secret for the agent (shown once); the one it replaces is accepted for
    /// `grace_hours` more.
    pub async fn rotate_identity_secret(
        &self,
        agent_id: &str,
        grace_hours: i64,
    ) -> Result<(SecretInfo, String), DbError> {
        let grace_ms = grace_hours.clamp(0, MAX_GRACE_HOURS) * 3_600_000;
        identity::rotate_secret(self.db(), agent_id, grace_ms, self.now_ms()).await
    }

    /// Stores an agent's identity settings; `false` when there is no such agent.
    pub async fn set_identity_settings(
        &self,
        agent_id: &str,
        settings: &agents::IdentitySettings,
    ) -> Result<bool, DbError> {
        let done = agents::set_identity(self.db(), agent_id, settings, self.now_ms()).await?;
        self.agents_changed();
        Ok(done)
    }

    /// Forget every cached visitor token here and on the other replicas (a person's data was
    /// deleted: any of their tokens may be cached).
    pub fn visitors_changed(&self) {
        self.0.visitors.clear();
        self.tell_replicas(Live::Visitors);
    }

    /// Forget one cached visitor token (by its row id, never the token itself) here and on the
    /// other replicas: it was identified or signed out; every other token stays cached.
    pub fn visitor_token_changed(&self, token_id: &str) {
        self.forget_visitor_token(token_id);
        self.tell_replicas(Live::VisitorToken { t: token_id.to_owned() });
    }

    /// Forget cached visitor tokens here only (told by another replica).
    pub(crate) fn forget_visitors(&self) {
        self.0.visitors.clear();
    }

    /// Forget one cached visitor token here only (told by another replica).
    pub(crate) fn forget_visitor_token(&self, token_id: &str) {
        self.0.visitors.forget(|v| v.token_id == token_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    const SECRET: &str = "pis_test-secret";
    const NOW: i64 = 1_800_000_000;

    fn sign(claims: serde_json::Value, secret: &str) -> String {
        crate::engine::jwt_crypto::install();
        jsonwebtoken::encode(&Header::default(), &claims, &EncodingKey::from_secret(secret.as_bytes())).unwrap()
    }

    fn good() -> serde_json::Value {
        json!({"sub": "u-42", "aud": "shop", "iat": NOW - 10, "exp": NOW + 600, "name": "Ada", "email": "ada@example.com"})
    }

    fn check(token: &str) -> Result<Claimed, IdentityError> {
        verified(token).map(|v| v.claimed)
    }

    fn verified(token: &str) -> Result<Verified, IdentityError> {
        verify(token, &[SECRET.to_owned()], "shop", 3600, NOW)
    }

    #[test]
    fn a_good_token_names_its_user() {
        let c = check(&sign(good(), SECRET)).unwrap();
        assert_eq!(
            c,
            Claimed { subject: "u-42".into(), name: Some("Ada".into()), email: Some("ada@example.com".into()) }
        );
    }

    #[test]
    fn each_bad_token_gets_its_own_refusal() {
        assert_eq!(check(&sign(good(), "another secret")), Err(IdentityError::Signature));
        let mut expired = good();
        expired["iat"] = json!(NOW - 700);
        expired["exp"] = json!(NOW - 61);
        assert_eq!(check(&sign(expired, SECRET)), Err(IdentityError::Expired));
        let mut skewed = good();
        skewed["exp"] = json!(NOW - 30);
        skewed["iat"] = json!(NOW - 90);
        assert!(check(&sign(skewed, SECRET)).is_ok(), "within the clock skew");
        let mut other = good();
        other["aud"] = json!("another-agent");
        assert_eq!(check(&sign(other, SECRET)), Err(IdentityError::Audience));
        let mut no_aud = good();
        no_aud.as_object_mut().unwrap().remove("aud");
        assert_eq!(check(&sign(no_aud, SECRET)), Err(IdentityError::Audience));
        for claim in ["exp", "iat", "sub"] {
            let mut missing = good();
            missing.as_object_mut().unwrap().remove(claim);
            assert_eq!(check(&sign(missing, SECRET)), Err(IdentityError::Claim(claim.into())), "{claim}");
        }
        let mut long = good();
        long["exp"] = json!(NOW + 7200);
        assert_eq!(check(&sign(long, SECRET)), Err(IdentityError::Lifetime(3600)));
        let mut ahead = good();
        ahead["iat"] = json!(NOW + 600);
        ahead["exp"] = json!(NOW + 900);
        assert_eq!(check(&sign(ahead, SECRET)), Err(IdentityError::NotYet));
        assert_eq!(check("not a token"), Err(IdentityError::Malformed));
        assert_eq!(verify(&sign(good(), SECRET), &[], "shop", 3600, NOW), Err(IdentityError::NotConfigured));
    }

    #[test]
    fn a_token_not_yet_valid_is_refused_and_its_jti_is_read() {
        let mut early = good();
        early["nbf"] = json!(NOW + 120);
        assert_eq!(check(&sign(early, SECRET)), Err(IdentityError::NotYet));
        let mut skewed = good();
        skewed["nbf"] = json!(NOW + 30);
        assert!(check(&sign(skewed, SECRET)).is_ok(), "within the clock skew");
        let mut once = good();
        once["jti"] = json!(" t-1 ");
        let v = verified(&sign(once, SECRET)).unwrap();
        assert_eq!((v.jti.as_deref(), v.exp), (Some("t-1"), NOW + 600));
        assert_eq!(verified(&sign(good(), SECRET)).unwrap().jti, None);
        let mut long = good();
        long["jti"] = json!("x".repeat(201));
        assert_eq!(check(&sign(long, SECRET)), Err(IdentityError::Claim("jti".into())));
        assert_eq!(crate::store::agents::IdentitySettings::default().max_age_secs, 600, "ten minutes by default");
    }

    #[test]
    fn only_hs256_is_accepted() {
        let b64 = |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let none = format!("{}.{}.", b64(json!({"alg": "none", "typ": "JWT"})), b64(good()));
        assert_eq!(check(&none), Err(IdentityError::Algorithm("none".into())));
        crate::engine::jwt_crypto::install();
        let hs512 = jsonwebtoken::encode(
            &Header::new(jsonwebtoken::Algorithm::HS512),
            &good(),
            &EncodingKey::from_secret(SECRET.as_bytes()),
        )
        .unwrap();
        assert_eq!(check(&hs512), Err(IdentityError::Algorithm("HS512".into())));
    }

    #[test]
    fn a_replaced_secret_still_verifies_while_it_is_given() {
        let old = sign(good(), "old secret");
        assert!(verify(&old, &["new secret".into(), "old secret".into()], "shop", 3600, NOW).is_ok());
        assert_eq!(verify(&old, &["new secret".into()], "shop", 3600, NOW), Err(IdentityError::Signature));
    }
}
