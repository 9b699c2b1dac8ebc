/** The definitions of the {@code rollcall.serve.*} keys, which the public {@code ServerKeys} re-exports. */
package dev.rollcall.server.internal.catalog;
