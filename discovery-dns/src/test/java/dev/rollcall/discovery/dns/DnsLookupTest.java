package dev.rollcall.discovery.dns;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class DnsLookupTest {

    @Test
    void writesIpv6AddressesInTheirShortForm() throws Exception {
        assertThat(DnsLookup.host(InetAddress.getByName("::1"))).isEqualTo("::1");
        assertThat(DnsLookup.host(InetAddress.getByName("fd00:0:0:1:0:0:0:5"))).isEqualTo("fd00:0:0:1::5");
        assertThat(DnsLookup.host(InetAddress.getByName("2001:db8:0:1:1:1:1:1"))).isEqualTo("2001:db8:0:1:1:1:1:1");
        assertThat(DnsLookup.host(InetAddress.getByName("1:0:0:2:0:0:0:3"))).isEqualTo("1:0:0:2::3");
        assertThat(DnsLookup.host(InetAddress.getByName("::"))).isEqualTo("::");
        assertThat(DnsLookup.host(InetAddress.getByName("10.0.0.5"))).isEqualTo("10.0.0.5");
    }
}
