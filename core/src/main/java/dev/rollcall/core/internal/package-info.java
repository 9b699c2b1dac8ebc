/** Rollcall's own plumbing, shared between its packages. Not an API: anything here may change. */
package dev.rollcall.core.internal;
