/** The site (projects, floors, rooms, desks) loaded once after sign-in, shared by every screen. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Project, Site } from './api.js';

export interface SiteContext {
  site: Site;
  /** The sandbox clock answers (development/uat). */
  sandbox: boolean;
  reload: () => void;
}
export const SiteData = createContext<SiteContext>({
  site: { projects: [], floors: [], rooms: [], desks: [], users: [], paymentProviders: [], calendarConnections: [] },
  sandbox: false,
  reload: () => {},
});
export const useSite = () => useContext(SiteData);

export function projectOf(site: Site, projectId: string | undefined): Project | undefined {
  return site.projects.find((p) => p._id === projectId);
}
/** The zone of an asset's project (the first project's, else UTC). */
export function zoneOf(site: Site, projectId?: string): string {
  return projectOf(site, projectId)?.timezone ?? site.projects[0]?.timezone ?? 'UTC';
}
export function assetName(site: Site, id: string): string | undefined {
  return site.rooms.find((r) => r._id === id)?.name ?? site.desks.find((d) => d._id === id)?.name;
}
