package dev.rollcall.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rollcall.api.registry.FleetSnapshot;
import dev.rollcall.api.registry.WorkerStatus;
import dev.rollcall.api.registry.WorkerStatus.State;
import dev.rollcall.policy.RolloutPolicy;
import dev.rollcall.testkit.Closer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The page in a real browser (headless Chromium): it lists a loopback fleet during a rollout, a drain
 * reaches its row without a reload, a rejected worker shows its reason, peer text stays text. Saves
 * {@code target/console.png}, the screenshot that docs/images/console.png is taken from.
 */
class ConsoleBrowserTest {

    private static final Duration LOAD = Duration.ofSeconds(30);

    @AutoClose
    final Closer closer = new Closer();

    @Test
    void thePageFollowsARolloutLiveWithoutAReload() throws Exception {
        // A rollout under way: 1.4.0 is kept until 1.5.0 has three workers; 2.0.0 is out of range.
        RolloutPolicy policy = RolloutPolicy.builder().range("^1").minWorkers(3).build();
        ConsoleFleet f = new ConsoleFleet(closer, policy, "1.4.0", "1.4.0", "1.4.0", "1.4.0", "1.5.0", "1.5.0", "2.0.0");
        f.addNobody();
        String hostile = "<img src=x onerror=\"window.__pwned=1\">";
        labelZones(f, hostile);
        FleetSnapshot settled = f.await(s -> s.counts().candidates() == 8 && s.counts().pending() == 0
                && s.counts().unreachable() == 1 && s.statuses().stream().allMatch(st -> !zoneOf(st).isEmpty()
                        || st.state() == State.UNREACHABLE));
        RollcallConsole console = closer.add(RollcallConsole.serve(f.resolver,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        HeadlessChromium chromium = closer.add(new HeadlessChromium(1400, 1100));
        var driver = chromium.driver;

        driver.get(console.uri().toString());
        WebDriverWait load = new WebDriverWait(driver, LOAD);
        load.until(d -> d.findElements(By.cssSelector("#workers tbody tr")).size() == 8);
        load.until(ExpectedConditions.textToBe(By.id("live"), "live"));

        // Every candidate, with its version; the rejected one with the resolver's reason, word for word.
        String rejectedUrl = f.worker(6).endpoint().url();
        WorkerStatus rejected = settled.status(rejectedUrl).orElseThrow();
        assertThat(rejected.state()).isEqualTo(State.REJECTED);
        assertThat(cell(driver, rejectedUrl, "reason").getText()).isEqualTo(rejected.reason()).contains("2.0.0");
        assertThat(cell(driver, rejectedUrl, "version").getText()).isEqualTo("2.0.0");
        assertThat(cell(driver, f.worker(4).endpoint().url(), "reason").getText()).contains("chosen cohort 1.4.0");
        assertThat(driver.findElement(By.id("cohort")).getText()).isEqualTo("chosen cohort 1.4.0");
        // Peer text is text: the hostile zone is shown as written and never ran.
        assertThat(cell(driver, f.worker(0).endpoint().url(), "zone").getText()).isEqualTo(hostile);
        assertThat(driver.executeScript("return window.__pwned === undefined")).isEqualTo(true);

        // A drain reaches its row within a second of the snapshot, on the same page (no reload).
        driver.executeScript("window.__sameLoad = 'yes'");
        String drainedUrl = f.worker(3).endpoint().url();
        f.worker(3).drain();
        f.await(s -> s.status(drainedUrl).map(st -> st.state() == State.DRAINING).orElse(false));
        new WebDriverWait(driver, Duration.ofSeconds(1)).until(d -> cell(d, drainedUrl, "state").getText()
                .startsWith("draining"));
        // The worker's own count of holders (the console's resolver holds nothing: 0), kept by the per-second redraw.
        new WebDriverWait(driver, Duration.ofSeconds(3)).until(d -> cell(d, drainedUrl, "state").getText()
                .endsWith(" (0 holders)"));
        assertThat(driver.executeScript("return window.__sameLoad")).isEqualTo("yes");
        assertThat(driver.findElement(By.cssSelector("tr[data-endpoint='" + drainedUrl + "']"))
                .getAttribute("data-state")).isEqualTo("draining");
        assertThat(driver.findElement(By.id("timeline")).getText()).contains("draining " + drainedUrl);

        // Filtering narrows the table; sorting by version puts 2.0.0 last.
        driver.findElement(By.id("filter")).sendKeys("1.5.0");
        load.until(d -> d.findElements(By.cssSelector("#workers tbody tr")).size() == 2);
        driver.findElement(By.id("filter")).clear();
        driver.findElement(By.id("filter")).sendKeys(" ");
        load.until(d -> d.findElements(By.cssSelector("#workers tbody tr")).size() == 8);
        driver.findElement(By.cssSelector("#workers th[data-key='version']")).click();
        load.until(d -> lastRowVersion(d).equals("2.0.0"));

        // The page measured its own updates (read back, not judged: no timing is asserted here).
        List<?> renders = (List<?>) driver.executeScript("return window.rollcallConsole.renders");
        assertThat(renders).isNotEmpty();

        // The screenshot shows a plain fleet: the hostile zone goes, and the page follows that too.
        String plainUrl = f.worker(0).endpoint().url();
        f.label(0, Map.of("zone", "eu-2", "node", "node-1"));
        load.until(d -> cell(d, plainUrl, "zone").getText().equals("eu-2"));
        Path shot = driver.getScreenshotAs(OutputType.FILE).toPath();
        Files.createDirectories(Paths.get("target"));
        Files.copy(shot, Paths.get("target", "console.png"), StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aUserWhoTypesRequirementsSeesWhichWorkersAQueryWouldGetAndWhatTheOthersLack() throws Exception {
        ConsoleFleet f = new ConsoleFleet(closer, RolloutPolicy.builder().range("^1").minWorkers(1).build(), "1.4.0");
        dev.rollcall.worker.RollcallWorker geo = f.addCapable("1.4.0", "udf:geo_distance");
        f.await(s -> s.counts().compatible() == 2);
        RollcallConsole console = closer.add(RollcallConsole.serve(f.resolver,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        HeadlessChromium chromium = closer.add(new HeadlessChromium(1400, 1100));
        var driver = chromium.driver;
        String plainUrl = f.worker(0).endpoint().url();
        String geoUrl = geo.endpoint().url();

        // Linked with ?require=: the table is that query's view.
        driver.get(console.uri().resolve("/?require=udf:geo_distance").toString());
        WebDriverWait load = new WebDriverWait(driver, LOAD);
        load.until(d -> d.findElements(By.cssSelector("tr[data-state='lacks_requirement']")).size() == 1);
        assertThat(cell(driver, plainUrl, "reason").getText()).isEqualTo("lacks udf:geo_distance");
        assertThat(cell(driver, plainUrl, "state").getText()).isEqualTo("lacks requirement");
        assertThat(cell(driver, geoUrl, "state").getText()).isEqualTo("compatible");
        assertThat(cell(driver, geoUrl, "capabilities").getText()).isEqualTo("udf:geo_distance");
        assertThat(driver.findElement(By.id("require")).getAttribute("value")).isEqualTo("udf:geo_distance");
        assertThat(driver.findElement(By.id("require-note")).getText()).contains("requires udf:geo_distance gets 1 worker;")
                .contains("1 other compatible worker is left out");

        // Malformed or hostile: the console's message, as text, and the view stays.
        WebElement input = driver.findElement(By.id("require"));
        input.clear();
        input.sendKeys("<img src=x onerror=\"window.__pwned=1\">\n");
        load.until(d -> d.findElement(By.id("require-problem")).getText().startsWith("require: requirement '<img"));
        assertThat(driver.executeScript("return window.__pwned === undefined")).isEqualTo(true);
        assertThat(cell(driver, plainUrl, "reason").getText()).isEqualTo("lacks udf:geo_distance");

        // Emptied: every compatible worker again, and the address without ?require=.
        input.clear();
        input.sendKeys("\n");
        load.until(d -> d.findElements(By.cssSelector("tr[data-state='compatible']")).size() == 2);
        assertThat(driver.findElement(By.id("require-problem")).getText()).isEmpty();
        assertThat(driver.getCurrentUrl()).doesNotContain("require=");
    }

    private static void labelZones(ConsoleFleet f, String hostile) {
        for (int i = 0; i < f.fleet.workers().size(); i++) {
            String zone = i == 0 ? hostile : (i % 2 == 0 ? "eu-1" : "eu-2");
            f.label(i, Map.of("zone", zone, "node", "node-" + (i + 1)));
        }
    }

    private static String zoneOf(WorkerStatus s) {
        return s.endpoint().labels().getOrDefault("zone", "");
    }

    private static WebElement cell(WebDriver d, String url, String column) {
        return d.findElement(By.cssSelector("tr[data-endpoint='" + url + "'] td." + column));
    }

    private static String lastRowVersion(WebDriver d) {
        List<WebElement> rows = d.findElements(By.cssSelector("#workers tbody tr td.version"));
        return rows.isEmpty() ? "" : rows.get(rows.size() - 1).getText();
    }
}
