package dev.rollcall.console;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's headless Chromium through its own chromedriver ({@code /usr/bin/chromium},
 * {@code /usr/bin/chromedriver}; {@code ROLLCALL_CHROMIUM} and {@code ROLLCALL_CHROMEDRIVER} name
 * others), with a fresh profile under {@code target/}. Both are named explicitly, so Selenium never
 * looks for or downloads a browser of its own. {@code ./run-tests} installs them (need_chromium).
 */
final class HeadlessChromium implements AutoCloseable {

    final ChromeDriver driver;
    private final Path profile;

    HeadlessChromium(int width, int height) {
        Path chromedriver = Paths.get(env("ROLLCALL_CHROMEDRIVER", "/usr/bin/chromedriver"));
        Path chromium = Paths.get(env("ROLLCALL_CHROMIUM", "/usr/bin/chromium"));
        if (!Files.isExecutable(chromedriver) || !Files.isExecutable(chromium)) {
            throw new IllegalStateException("the console's browser test needs Debian's chromium and chromium-driver ("
                    + chromium + ", " + chromedriver + "): ./run-tests installs them (need_chromium), or run"
                    + " apt-get install -y chromium chromium-driver");
        }
        try {
            Files.createDirectories(Paths.get("target"));
            profile = Files.createTempDirectory(Paths.get("target").toAbsolutePath(), "chromium-profile-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--disable-extensions", "--user-data-dir=" + profile,
                "--window-size=" + width + "," + height);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(chromedriver.toString()))
                .usingAnyFreePort()
                .withTimeout(Duration.ofSeconds(30))
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30)).scriptTimeout(Duration.ofSeconds(30));
        driver.manage().window().setSize(new Dimension(width, height));
    }

    private static String env(String name, String otherwise) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? otherwise : v;
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                // a leftover profile under target/ is harmless
            }
        }
    }
}
