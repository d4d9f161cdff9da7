//! Pages of the application.

pub mod embed;
pub mod home;
