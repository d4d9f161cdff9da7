//! Business hours (administrators) and presence (everyone): who is online, and the away switch.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use super::access::{AdminUser, ConsoleUser};
use crate::console::error::ConsoleError;
use crate::console::types::{HoursView, NotificationsView, PresenceView};

/// An agent's business hours, and whether people are in now.
#[server]
pub async fn agent_hours(agent_id: String) -> Result<HoursView, ConsoleError> {
    use parley_engine::engine::hours::Availability;
    use parley_engine::store::agents;
    let AdminUser { state, .. } = AdminUser::extract().await?;
    let agent = agents::by_id(state.engine.db(), &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let hours = state.engine.business_hours(&agent.id).await?;
    Ok(match hours {
        None => HoursView {
            agent_id: agent.id,
            set: false,
            time_zone: "UTC".into(),
            days: (0..7).map(|d| if d < 5 { "09:00-17:00".to_owned() } else { String::new() }).collect(),
            closed_dates: String::new(),
            now: "No business hours: visitors can always ask for a person.".into(),
        },
        Some(h) => HoursView {
            agent_id: agent.id,
            set: true,
            now: match h.at(state.engine.now_ms()) {
                Availability::Open => "Open now.".into(),
                Availability::Closed { reopens_at: Some(at) } => format!("Closed now; back {}.", h.local_time(at)),
                Availability::Closed { reopens_at: None } => "Closed, with no opening in the coming year.".into(),
            },
            days: (0..7).map(|d| h.day_text(d)).collect(),
            closed_dates: h.closed_dates.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"),
            time_zone: h.time_zone,
        },
    })
}

/// Sets an agent's hours: a time zone, a line of ranges per day (Monday first), closed dates.
#[allow(clippy::too_many_arguments)]
#[server]
pub async fn save_hours(
    agent_id: String,
    time_zone: String,
    #[server(default)] day0: String,
    #[server(default)] day1: String,
    #[server(default)] day2: String,
    #[server(default)] day3: String,
    #[server(default)] day4: String,
    #[server(default)] day5: String,
    #[server(default)] day6: String,
    #[server(default)] closed_dates: String,
) -> Result<(), ConsoleError> {
    use parley_engine::engine::hours::BusinessHours;
    use parley_engine::store::{agents, hours};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let agent = agents::by_id(state.engine.db(), &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    let days = [day0, day1, day2, day3, day4, day5, day6];
    let parsed = BusinessHours::parse(&time_zone, &days, &closed_dates)
        .map_err(|(field, message)| ConsoleError::invalid(&field, message))?;
    hours::set(state.engine.db(), &agent.id, Some(&parsed), state.engine.now_ms()).await?;
    state.engine.audit(Some(&user), "hours.set", Some(&agent.public_key), &parsed.time_zone).await;
    Ok(())
}

/// Removes an agent's hours: people count as always reachable.
#[server]
pub async fn remove_hours(agent_id: String) -> Result<(), ConsoleError> {
    use parley_engine::store::{agents, hours};
    let AdminUser { state, user } = AdminUser::extract().await?;
    let agent = agents::by_id(state.engine.db(), &agent_id).await?.ok_or(ConsoleError::NotFound)?;
    hours::set(state.engine.db(), &agent.id, None, state.engine.now_ms()).await?;
    state.engine.audit(Some(&user), "hours.remove", Some(&agent.public_key), "").await;
    Ok(())
}

/// Who is online now (console open, not away), and whether the asking user is away.
#[server]
pub async fn presence() -> Result<PresenceView, ConsoleError> {
    use parley_engine::store::hours;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let db = state.engine.db();
    Ok(PresenceView {
        away: hours::is_away(db, &user.id).await?,
        online: hours::online(db, state.engine.now_ms()).await?,
    })
}

/// The asking user is away (or back).
#[server]
pub async fn set_away(#[server(default)] away: bool) -> Result<(), ConsoleError> {
    use parley_engine::store::hours;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    hours::set_away(state.engine.db(), &user.id, away).await?;
    state.engine.console(parley_engine::engine::console::ConsoleEvent::new("", "", "presence"));
    if !away {
        // Back: the queues of automatic teams may have waited for them.
        state.engine.assign_waiting().await;
    }
    Ok(())
}

/// What the asking user is mailed about.
#[server]
pub async fn my_notifications() -> Result<NotificationsView, ConsoleError> {
    use parley_engine::store::mail;
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    Ok(NotificationsView {
        mail_enabled: state.engine.mail_enabled(),
        events: mail::notifications_of(state.engine.db(), &user.id).await?,
        email: user.email,
    })
}

/// Sets what the asking user is mailed about: `events`, comma-separated names.
#[server]
pub async fn save_notifications(#[server(default)] events: String) -> Result<(), ConsoleError> {
    use parley_engine::store::mail::{self, NOTIFICATIONS};
    let ConsoleUser { state, user } = ConsoleUser::extract().await?;
    let mut chosen: Vec<&str> = Vec::new();
    for e in events.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let known = NOTIFICATIONS
            .iter()
            .find(|n| **n == e)
            .ok_or_else(|| ConsoleError::invalid("events", format!("unknown notification `{e}`")))?;
        if !chosen.contains(known) {
            chosen.push(known);
        }
    }
    if !chosen.is_empty() && !state.engine.mail_enabled() {
        return Err(ConsoleError::Conflict("Email is not set up on this server (PARLEY_SMTP_HOST).".into()));
    }
    mail::set_notifications(state.engine.db(), &user.id, &chosen).await?;
    state.engine.audit(Some(&user), "notifications.set", Some(&user.email), &chosen.join(", ")).await;
    Ok(())
}
