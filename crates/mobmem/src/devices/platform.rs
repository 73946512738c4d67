//! Placeholder, being written.

/// Costs of the read path of a flash file system on one platform.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Platform {
    pub name: String,
}
