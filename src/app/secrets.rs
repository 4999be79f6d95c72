//! Secrets (the API password or token secret) in the OS keychain, only when the user asks,
//! behind a small interface so tests use a stand-in. Secrets are never written anywhere else.

/// The keychain service name entries are filed under.
pub const SERVICE: &str = "hookscope";

pub trait SecretStore: Send + Sync {
    fn save(&self, account: &str, secret: &str) -> Result<(), String>;
    /// `Ok(None)` when nothing is stored for `account`.
    fn load(&self, account: &str) -> Result<Option<String>, String>;
    fn forget(&self, account: &str) -> Result<(), String>;
}

/// The platform's keychain (Secret Service on Linux, Keychain on macOS, Credential Manager on
/// Windows).
pub struct OsKeychain;

fn entry(account: &str) -> Result<keyring::Entry, String> {
    keyring::Entry::new(SERVICE, account).map_err(|e| format!("the keychain cannot be used: {e}"))
}

impl SecretStore for OsKeychain {
    fn save(&self, account: &str, secret: &str) -> Result<(), String> {
        entry(account)?
            .set_password(secret)
            .map_err(|e| format!("the keychain did not store the password: {e}"))
    }

    fn load(&self, account: &str) -> Result<Option<String>, String> {
        match entry(account)?.get_password() {
            Ok(p) => Ok(Some(p)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(format!("the keychain could not be read: {e}")),
        }
    }

    fn forget(&self, account: &str) -> Result<(), String> {
        match entry(account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(format!("the keychain could not forget the password: {e}")),
        }
    }
}

/// The keychain account for a user at an API: `user@base-url`.
pub fn account(user: &str, base_url: &str) -> String {
    format!("{}@{}", user.trim(), base_url.trim().trim_end_matches('/'))
}
