//! Pages of the application.

pub mod home;
