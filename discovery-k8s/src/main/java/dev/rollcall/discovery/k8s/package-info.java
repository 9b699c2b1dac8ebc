/** The k8s discovery backend. Not implemented yet: see this module's README. */
package dev.rollcall.discovery.k8s;
