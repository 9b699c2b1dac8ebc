/**
 * Label selectors in Kubernetes' syntax and meaning ({@link dev.rollcall.api.labels.LabelSelector}):
 * which workers a coordinator may use at all ({@code rollcall.selector}) and which it prefers
 * ({@code rollcall.prefer-labels}).
 */
package dev.rollcall.api.labels;
