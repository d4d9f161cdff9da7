//! `collect_assessment_info` (capability `assessment`): records what the visitor told us for an
//! eligibility assessment (as a FACT memory, importance 80) and points to the paid assessment.

use serde_json::{Map, Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, async_trait};
use crate::store::agents::Domain;
use crate::store::{conversations, memories};

pub struct CollectAssessmentInfo;

/// Importance of the stored facts.
pub const IMPORTANCE: i64 = 80;

const FIELDS: &[(&str, &str)] = &[
    ("category", "类别"),
    ("age", "年龄"),
    ("education", "学历"),
    ("university", "毕业院校"),
    ("yearsOfExperience", "工作年限"),
    ("currentJobTitle", "职位"),
    ("industry", "行业"),
    ("annualIncome", "年收入(人民币)"),
    ("hasHKEmployer", "有香港雇主"),
];

fn summary(info: &Map<String, Value>) -> String {
    let parts: Vec<String> = FIELDS
        .iter()
        .filter_map(|(key, label)| {
            info.get(*key).map(|v| match v {
                Value::String(s) => format!("{label}：{s}"),
                Value::Bool(b) => format!("{label}：{}", if *b { "是" } else { "否" }),
                other => format!("{label}：{other}"),
            })
        })
        .collect();
    format!("评估信息 — {}", parts.join("；"))
}

#[async_trait]
impl Tool for CollectAssessmentInfo {
    fn name(&self) -> &'static str {
        "collect_assessment_info"
    }

    fn description(&self) -> &'static str {
        "Record the visitor's details for an eligibility assessment (category required; age, education, \
         university, years of experience, job title, industry, annual income in CNY, Hong Kong employer). Use it when \
         the visitor shares such details and is interested in an assessment."
    }

    fn capability(&self) -> &'static str {
        "assessment"
    }

    fn effect(&self) -> super::effect::Effect {
        super::effect::Effect::write(super::effect::Action::Details)
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "category": super::any_category(),
                "age": {"type": "integer", "minimum": 16, "maximum": 100},
                "education": {"type": "string", "maxLength": 100},
                "university": {"type": "string", "maxLength": 200},
                "yearsOfExperience": {"type": "number", "minimum": 0, "maximum": 60},
                "currentJobTitle": {"type": "string", "maxLength": 200},
                "industry": {"type": "string", "maxLength": 200},
                "annualIncome": {"type": "number", "minimum": 0, "description": "Annual income in CNY."},
                "hasHKEmployer": {"type": "boolean"}
            },
            "required": ["category"],
            "additionalProperties": false
        })
    }

    fn for_domain(&self, domain: &Domain) -> Option<Value> {
        super::with_domain_category(self.schema(), domain, false)
    }

    async fn execute(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let info = args.as_object().cloned().unwrap_or_default();
        let category = info.get("category").and_then(Value::as_str).map(str::to_owned);
        super::check_category(&ctx.agent, category.as_deref().unwrap_or_default())?;
        memories::save(
            &ctx.db,
            &ctx.visitor_id,
            &ctx.agent.id,
            "FACT",
            &summary(&info),
            category.as_deref(),
            IMPORTANCE,
            ctx.clock.now_ms(),
        )
        .await
        .map_err(|e| ToolError::internal("could not store the details", e))?;
        // Kept with the conversation too: an assessment order made in it carries them.
        if !ctx.conversation_id.is_empty() {
            conversations::add_assessment_facts(&ctx.db, &ctx.conversation_id, &info)
                .await
                .map_err(|e| ToolError::internal("could not store the details", e))?;
        }
        Ok(ToolOutput::result(json!({
            "success": true,
            "collectedInfo": Value::Object(info),
            "message": crate::lang::Lang::of_agent(ctx.agent.language, &ctx.agent.greeting).pick(
                "Your details are recorded. For a full assessment, choose the paid assessment.",
                "已记录您的信息。如需完整评估，请选择付费评估服务。"
            ),
            "nextStep": "payment",
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tools::testing;

    #[tokio::test]
    async fn stores_a_fact_and_points_to_payment() {
        let t = testing::context().await;
        let args = json!({"category": "QMAS", "age": 35, "education": "硕士", "yearsOfExperience": 10, "hasHKEmployer": false});
        let out = CollectAssessmentInfo.execute(&t.ctx, args.clone()).await.unwrap();
        assert_eq!(out.result["success"], true);
        assert_eq!(out.result["collectedInfo"], args);
        assert_eq!(out.result["nextStep"], "payment");
        let stored = memories::of_visitor(&t.ctx.db, &t.ctx.visitor_id).await.unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!((stored[0].kind.as_str(), stored[0].importance), ("FACT", 80));
        assert!(stored[0].content.contains("年龄：35") && stored[0].content.contains("学历：硕士"));
        assert!(stored[0].content.contains("有香港雇主：否"));
    }

    #[tokio::test]
    async fn storage_failure_is_a_tool_error() {
        let t = testing::context().await;
        t.ctx.db.close().await;
        let err = CollectAssessmentInfo.execute(&t.ctx, json!({"category": "GEP"})).await.unwrap_err();
        assert!(matches!(err, ToolError::Internal(_)), "{err:?}");
    }
}
