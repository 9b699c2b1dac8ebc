/** The k8s discovery backend: an empty shell until its own issue lands; see this module's README. */
package dev.rollcall.discovery.k8s;
