package dev.rollcall.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.IHelpSectionRenderer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * Keeps picocli's help from wrapping inside a token. Picocli wraps with the JDK's line
 * {@code BreakIterator}, which may break after {@code .} {@code :} {@code /} and the like, so that
 * {@code ^1.4} became {@code ^1.} / {@code 4} and {@code -Drollcall.config=FILE} became
 * {@code -Drollcall.} / {@code config=FILE}. Before rendering, such punctuation inside a word is
 * swapped for a private-use character (one column wide, never a break opportunity); each rendered
 * section swaps it back. Lines then break at spaces only.
 */
final class UnbrokenHelp {

    private static final String PUNCTUATION = ".:/=-^~<>@*,;+|";
    private static final char FIRST_STAND_IN = '\uE000';

    private UnbrokenHelp() {
    }

    /** Applies to {@code commandLine} and every subcommand; returns it. */
    static CommandLine apply(CommandLine commandLine) {
        protect(commandLine.getCommandSpec());
        Map<String, IHelpSectionRenderer> sections = new LinkedHashMap<>();
        commandLine.getHelpSectionMap().forEach((key, renderer) -> sections.put(key, help -> restore(renderer.render(help))));
        commandLine.setHelpSectionMap(sections);
        commandLine.getSubcommands().values().forEach(UnbrokenHelp::apply);
        return commandLine;
    }

    private static void protect(CommandSpec spec) {
        var usage = spec.usageMessage();
        usage.description(protect(usage.description()));
        usage.footer(protect(usage.footer()));
        usage.header(protect(usage.header()));
        Map<String, String> exitCodes = new LinkedHashMap<>();
        usage.exitCodeList().forEach((code, text) -> exitCodes.put(code, protect(text)));
        usage.exitCodeList(exitCodes);
        List<OptionSpec> options = new ArrayList<>(spec.options());
        options.forEach(spec::remove);
        options.forEach(o -> spec.addOption(o.toBuilder().description(protect(o.description())).build()));
        List<PositionalParamSpec> positionals = new ArrayList<>(spec.positionalParameters());
        positionals.forEach(spec::remove);
        positionals.forEach(p -> spec.addPositional(p.toBuilder().description(protect(p.description())).build()));
    }

    private static String[] protect(String[] lines) {
        String[] out = new String[lines.length];
        for (int i = 0; i < lines.length; i++) {
            out[i] = protect(lines[i]);
        }
        return out;
    }

    /** Swaps punctuation between two non-blank characters; leaves picocli's {@code ${...}} variables alone. */
    static String protect(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        int variableDepth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '$' && i + 1 < text.length() && text.charAt(i + 1) == '{') {
                variableDepth++;
            } else if (c == '}' && variableDepth > 0) {
                variableDepth--;
            }
            int p = PUNCTUATION.indexOf(c);
            boolean inWord = i > 0 && i + 1 < text.length() && !Character.isWhitespace(text.charAt(i - 1))
                    && !Character.isWhitespace(text.charAt(i + 1));
            sb.append(p >= 0 && inWord && variableDepth == 0 ? (char) (FIRST_STAND_IN + p) : c);
        }
        return sb.toString();
    }

    static String restore(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            int p = c - FIRST_STAND_IN;
            sb.append(p >= 0 && p < PUNCTUATION.length() ? PUNCTUATION.charAt(p) : c);
        }
        return sb.toString();
    }
}
