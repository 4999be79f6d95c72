//! Who can call a URL: whether a service at one address can reach a webhook at another.
//!
//! A real service calls from the internet; a webhook at `http://127.0.0.1:8787/hook` (what the
//! receiver's own address is) or at a private network's address never gets its calls, and the
//! service's registration check fails with an error that does not say why. The form and
//! `webhooks create` say so before the webhook is sent.

/// How far a URL's host can be reached from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// Only this machine: loopback, `localhost`, the unspecified address.
    ThisMachine,
    /// Only its own network: private and link-local addresses, `.local` (mDNS) names.
    PrivateNetwork,
    /// Anywhere, as far as the address tells (a public address or a domain name).
    Anywhere,
}

/// How far `host` can be reached from.
pub fn reach(host: &url::Host<&str>) -> Reach {
    use std::net::Ipv4Addr;
    let v4 = |ip: Ipv4Addr| {
        if ip.is_loopback() || ip.is_unspecified() {
            Reach::ThisMachine
        } else if ip.is_private() || ip.is_link_local() || is_shared(ip) {
            Reach::PrivateNetwork
        } else {
            Reach::Anywhere
        }
    };
    match host {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") {
                Reach::ThisMachine
            } else if d.ends_with(".local") || !d.contains('.') {
                // mDNS names, and a bare host name, which only a local resolver knows.
                Reach::PrivateNetwork
            } else {
                Reach::Anywhere
            }
        }
        url::Host::Ipv4(ip) => v4(*ip),
        url::Host::Ipv6(ip) => {
            if let Some(mapped) = ip.to_ipv4_mapped() {
                v4(mapped)
            } else if ip.is_loopback() || ip.is_unspecified() {
                Reach::ThisMachine
            } else if ip.is_unique_local() || ip.is_unicast_link_local() {
                Reach::PrivateNetwork
            } else {
                Reach::Anywhere
            }
        }
    }
}

/// 100.64.0.0/10, the carrier-grade NAT range (Tailscale's addresses among them).
fn is_shared(ip: std::net::Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    a == 100 && (64..128).contains(&b)
}

/// How far `url`'s host can be reached from; `None` for a URL that does not parse or has no
/// host (the form says what is wrong with it).
pub fn url_reach(url: &str) -> Option<Reach> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    parsed.host().map(|h| reach(&h))
}

/// Why a service whose API is at `api_base` cannot call `webhook_url`, in a sentence that says
/// what to do, or `None` when it can as far as the addresses tell. An API base that does not
/// parse counts as a service on the internet (that is what a real service is).
pub fn unreachable_by(api_base: &str, webhook_url: &str) -> Option<String> {
    let parsed = url::Url::parse(webhook_url.trim()).ok()?;
    let host = parsed.host()?;
    let to = reach(&host);
    let from = url_reach(api_base).unwrap_or(Reach::Anywhere);
    // A service on this machine reaches everything; one on the same network reaches that
    // network (the addresses cannot tell which network: give it the benefit of the doubt).
    if to >= from {
        return None;
    }
    let port = parsed
        .port_or_known_default()
        .map(|p| format!(" {p}"))
        .unwrap_or_default();
    let what = match to {
        Reach::ThisMachine => "this machine's own address",
        _ => "an address on a private network",
    };
    Some(format!(
        "The service calls from its own servers and cannot reach {host}, {what}. Put a tunnel \
         (cloudflared, ngrok) in front of port{port} and give its https address as the URL."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(url: &str) -> Reach {
        url_reach(url).unwrap_or_else(|| panic!("{url} has a host"))
    }

    #[test]
    fn this_machine_private_networks_and_the_rest_are_told_apart() {
        for u in [
            "http://127.0.0.1:8787/hook",
            "http://127.8.9.10/",
            "http://localhost:8787/hook",
            "http://LOCALHOST./",
            "http://app.localhost/",
            "http://0.0.0.0:8787/",
            "http://[::1]:8787/",
            "http://[::]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert_eq!(of(u), Reach::ThisMachine, "{u}");
        }
        for u in [
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.20:8080/hook",
            "http://169.254.1.1/",
            "http://100.101.102.103/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:192.168.0.1]/",
            "http://laptop.local/",
            "http://laptop/",
        ] {
            assert_eq!(of(u), Reach::PrivateNetwork, "{u}");
        }
        for u in [
            "https://xyz.trycloudflare.com/hook",
            "http://8.8.8.8/",
            "http://172.32.0.1/",
            "http://100.128.0.1/",
            "http://[2001:db8::1]/",
        ] {
            assert_eq!(of(u), Reach::Anywhere, "{u}");
        }
    }

    #[test]
    fn a_service_on_the_internet_is_told_it_cannot_reach_a_local_url() {
        let why = unreachable_by("https://api.example.com/v1", "http://127.0.0.1:8787/hook")
            .expect("a public service cannot call 127.0.0.1");
        assert!(
            why.contains("cannot reach 127.0.0.1, this machine's own address"),
            "{why}"
        );
        assert!(why.contains("in front of port 8787"), "{why}");
        assert!(why.contains("give its https address as the URL"), "{why}");
        let why = unreachable_by("https://api.example.com/v1", "http://192.168.1.20/hook")
            .expect("nor a private address");
        assert!(
            why.contains("192.168.1.20, an address on a private network"),
            "{why}"
        );
        assert!(why.contains("port 80"), "{why}");
        // A base URL not typed yet is a real service's all the same.
        assert!(unreachable_by("", "http://localhost:8787/hook").is_some());
    }

    #[test]
    fn a_service_that_can_reach_the_url_is_not_warned_about() {
        // A tunnel's public address.
        assert_eq!(
            unreachable_by(
                "https://api.example.com/v1",
                "https://xyz.trycloudflare.com/hook"
            ),
            None
        );
        // A service on this machine (an emulator run by hand) reaches this machine.
        assert_eq!(
            unreachable_by("http://127.0.0.1:8080/v1", "http://127.0.0.1:8787/hook"),
            None
        );
        // One on the same private network reaches it.
        assert_eq!(
            unreachable_by("http://10.0.0.5/v1", "http://10.0.0.7:8787/hook"),
            None
        );
        // A URL that does not parse is the form's other message's business.
        assert_eq!(unreachable_by("https://api.example.com", "not a url"), None);
    }
}
