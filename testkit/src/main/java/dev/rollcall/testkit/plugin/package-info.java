/** Plugins compiled at test time, for tests of how Rollcall finds a user's policies and backends. */
package dev.rollcall.testkit.plugin;
