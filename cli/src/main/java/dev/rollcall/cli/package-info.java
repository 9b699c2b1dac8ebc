/**
 * The {@code rollcall} command line: {@link dev.rollcall.cli.RollcallCommand} and its subcommands.
 * Everything but the commands themselves is package-private.
 */
package dev.rollcall.cli;
