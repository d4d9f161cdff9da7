//! An OpenAI-compatible embeddings client (`POST {base}/embeddings`). Optional: when it is not
//! configured, or fails, retrieval is full-text alone.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::fetch::FetchError;
use crate::secret::ApiKey;

/// Where embeddings come from.
#[derive(Clone, Debug)]
pub struct Embedder {
    http: reqwest::Client,
    url: String,
    api_key: Option<ApiKey>,
    model: String,
    timeout: Duration,
}

impl Embedder {
    pub fn new(http: reqwest::Client, base_url: &str, api_key: Option<String>, model: &str) -> Self {
        Embedder {
            http,
            url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            api_key: api_key.and_then(ApiKey::new),
            model: model.to_owned(),
            timeout: Duration::from_secs(5),
        }
    }

    /// One vector per input, in order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, FetchError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let mut request = self.http.post(&self.url).json(&json!({"model": self.model, "input": inputs}));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| FetchError::Timeout(self.timeout.as_millis()))?
            .map_err(FetchError::connect)?;
        if !response.status().is_success() {
            return Err(FetchError::Status(response.status().as_u16()));
        }
        let body: Value = tokio::time::timeout(self.timeout, response.json())
            .await
            .map_err(|_| FetchError::Timeout(self.timeout.as_millis()))?
            .map_err(FetchError::unreadable)?;
        let mut data: Vec<(usize, Vec<f32>)> = body
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| FetchError::Answer("no data".into()))?
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let index = d.get("index").and_then(Value::as_u64).map(|x| x as usize).unwrap_or(i);
                let vector = d
                    .get("embedding")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_f64).map(|x| x as f32).collect())
                    .unwrap_or_default();
                (index, vector)
            })
            .collect();
        data.sort_by_key(|(i, _)| *i);
        if data.len() != inputs.len() || data.iter().any(|(_, v)| v.is_empty()) {
            return Err(FetchError::Answer("wrong number of vectors".into()));
        }
        Ok(data.into_iter().map(|(_, v)| v).collect())
    }
}

/// Cosine similarity (0 for mismatched or empty vectors).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

#[cfg(test)]
mod tests {
    use super::cosine;

    #[test]
    fn cosine_basics() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).abs() < 1e-6);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
    }
}
