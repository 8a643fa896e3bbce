/**
 * The connector of each calendar connection, built from its row (secrets opened
 * here and nowhere else) once per version of the row, so a token cached by an
 * adapter lives as long as the connection's settings do.
 */
import type { SecretBox } from '../../platform/crypto/secrets.js';
import type { CalendarConnector, ConnectionAccount, ConnectorDeps, ConnectorProvider } from './connector.js';
import type { ConnectionRow } from './connected-repository.js';

/** Builds a provider's adapter from its account. */
export type ConnectorFactory<P extends ConnectorProvider = ConnectorProvider> = (
  account: Extract<ConnectionAccount, { provider: P }>,
  deps: ConnectorDeps,
) => CalendarConnector;

export type ConnectorFactories = { [P in ConnectorProvider]?: ConnectorFactory<P> };

export interface ConnectorRegistryDeps {
  secretBox: SecretBox;
  /** Adapter factories by provider (services.ts fills them; tests may replace them). */
  factories: ConnectorFactories;
  connectorDeps: ConnectorDeps;
}

export class ConnectorRegistry {
  private readonly built = new Map<string, { version: number; connector: CalendarConnector }>();

  constructor(private readonly deps: ConnectorRegistryDeps) {}

  connectorOf(row: ConnectionRow): CalendarConnector {
    const cached = this.built.get(row.id);
    if (cached && cached.version === Number(row.updated_at)) return cached.connector;
    const account = accountOf(row, this.deps.secretBox.open(row.secret_enc));
    const { microsoft, google } = this.deps.factories;
    const connector =
      account.provider === 'google' ? google?.(account, this.deps.connectorDeps) : microsoft?.(account, this.deps.connectorDeps);
    if (!connector) throw new Error(`No connector for calendar provider ${row.provider}`);
    this.built.set(row.id, { version: Number(row.updated_at), connector });
    return connector;
  }
}

function accountOf(row: ConnectionRow, secret: string): ConnectionAccount {
  const urls = { apiBaseUrl: row.api_base_url, tokenUrl: row.token_url };
  if (row.provider === 'google')
    return {
      id: row.id,
      provider: 'google',
      serviceAccountEmail: row.service_account_email ?? '',
      privateKey: secret,
      subject: row.subject ?? '',
      ...urls,
    };
  return { id: row.id, provider: 'microsoft', tenantId: row.tenant_id ?? '', clientId: row.client_id ?? '', clientSecret: secret, ...urls };
}
