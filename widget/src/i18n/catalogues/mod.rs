//! The catalogues: every word of the panel in each language, one file per language (the keys are
//! [`Labels`](super::Labels)'s fields, so a missing one does not compile).
//!
//! Tone: the polite form a company's support desk uses with a customer (Sie, vous, usted, você,
//! Anda, です/ます, 합니다/해요), brand names (Alipay, WeChat Pay, Parley) as the brands write them
//! unless the language has a settled local name for them.

mod ar;
mod de;
mod en;
mod es;
mod fr;
mod id;
mod ja;
mod ko;
mod pt_br;
mod th;
mod vi;
mod zh;

pub use ar::AR;
pub use de::DE;
pub use en::EN;
pub use es::ES;
pub use fr::FR;
pub use id::ID;
pub use ja::JA;
pub use ko::KO;
pub use pt_br::PT_BR;
pub use th::TH;
pub use vi::VI;
pub use zh::{ZH_HANS, ZH_HANT};
