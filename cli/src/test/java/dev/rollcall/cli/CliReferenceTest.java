package dev.rollcall.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * docs/cli-reference.md documents every option each subcommand's help lists, in the subcommand's
 * own section: an option added to a command and not to the page fails here.
 */
class CliReferenceTest {

    private static String section(String page, String command) {
        String heading = "## `rollcall " + command + "`";
        int start = page.indexOf(heading);
        assertThat(start).as("docs/cli-reference.md has a section " + heading).isNotNegative();
        int end = page.indexOf("\n## ", start + heading.length());
        return page.substring(start, end < 0 ? page.length() : end);
    }

    @Test
    void everyOptionOfEveryDocumentedCommandIsInItsSection() throws Exception {
        String page = Files.readString(Path.of("../docs/cli-reference.md"), StandardCharsets.UTF_8);
        CommandSpec root = RollcallCommand.commandLine(new RollcallCommand()).getCommandSpec();
        List<String> missing = new ArrayList<>();
        for (String command : new String[] {"demo", "workers", "probe", "conform", "serve", "worker"}) {
            String section = section(page, command);
            CommandLine sub = root.subcommands().get(command);
            for (OptionSpec option : sub.getCommandSpec().options()) {
                String longest = Arrays.stream(option.names()).max(Comparator.comparingInt(String::length)).orElseThrow();
                if (!section.contains("`" + longest)) {
                    missing.add("rollcall " + command + " " + longest);
                }
            }
        }
        assertThat(missing).as("options that docs/cli-reference.md does not document").isEmpty();
    }
}
