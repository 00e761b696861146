import type { FunnelConfig, WebEventKind } from '../config';
import { sqlLiteral } from '../warehouse/sql';
import type { FunnelSteps } from './engine/dialect';

/**
 * The funnel's steps after a download (FUNNEL_VISIT, FUNNEL_CONVERSION) as
 * conditions over web_events' columns, which the funnel's model reads as
 * `SQL_UTILS.funnelStep('visit')` and `SQL_UTILS.funnelStep('conversion')`: a
 * web event of any of the step's kinds. A page view is a web event without a
 * category (structured events always have one).
 */
export function funnelStepsSql(funnel: FunnelConfig): FunnelSteps {
  return { visit: anyOf(funnel.visit), conversion: anyOf(funnel.conversion) };
}

function anyOf(kinds: readonly WebEventKind[]): string {
  return `(${kinds.map(kindSql).join(' OR ')})`;
}

function kindSql(kind: WebEventKind): string {
  if ('pageViews' in kind) return "se_category = ''";
  const action = kind.action === undefined ? '' : ` AND se_action = ${sqlLiteral(kind.action)}`;
  return `(se_category = ${sqlLiteral(kind.category)}${action})`;
}
