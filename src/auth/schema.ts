/**
 * The tables of authentication: groups, sessions, and the login sessions of the built-in provider's tokens. (Each project's authentication version, bumped whenever
 * what its tokens grant changes, is a column of `projects`; see storage/projects.ts.)
 */
import type { TableDef } from '../storage/schema.js';

export const authTables: readonly TableDef[] = [
  {
    name: 'access_groups',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      name: { type: 'text', notNull: true },
      source_id: { type: 'text' },
      members: { type: 'text' },
      capabilities: { type: 'text', notNull: true },
      metadata: { type: 'text' },
      attributes: { type: 'text' },
      created_time: { type: 'integer', notNull: true },
    },
    indexes: [{ name: 'access_groups_project', columns: ['project_id', 'id'] }],
  },
  {
    name: 'sessions',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      type: { type: 'text', notNull: true },
      status: { type: 'text', notNull: true },
      subject: { type: 'text', notNull: true },
      client_id: { type: 'text' },
      claims: { type: 'text', notNull: true },
      nonce_hash: { type: 'text' },
      nonce_expires: { type: 'integer', notNull: true },
      key_hash: { type: 'text' },
      creation_time: { type: 'integer', notNull: true },
      expiration_time: { type: 'integer', notNull: true },
      max_expiration_time: { type: 'integer' },
      extendable: { type: 'integer', notNull: true },
      // A session created with another session's access token: it never outlives it and is revoked with it.
      parent_id: { type: 'integer' },
    },
    indexes: [
      { name: 'sessions_project', columns: ['project_id', 'id'] },
      { name: 'sessions_nonce', columns: ['nonce_hash'], unique: true },
      { name: 'sessions_parent', columns: ['parent_id'] },
    ],
  },
  {
    // One per token the built-in identity provider issues (login-sessions.ts); revoking one refuses its tokens.
    name: 'login_sessions',
    columns: {
      id: { type: 'id' },
      principal: { type: 'text', notNull: true },
      status: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
      expiration_time: { type: 'integer', notNull: true },
      deactivated_time: { type: 'integer' },
    },
    indexes: [{ name: 'login_sessions_principal', columns: ['principal', 'id'] }],
  },
  {
    // Authorization codes redeemed (authorize.ts), until they expire: a code is used once, whichever process redeems it.
    name: 'redeemed_codes',
    columns: {
      jti: { type: 'text', notNull: true },
      expires_at: { type: 'integer', notNull: true },
    },
    primaryKey: ['jti'],
    indexes: [{ name: 'redeemed_codes_expiry', columns: ['expires_at'] }],
  },
  {
    // When each principal first got a token (the principals' createdTime); login sessions are pruned.
    name: 'principal_first_logins',
    columns: {
      principal: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['principal'],
  },
  {
    // The people who called a project (user-profiles.ts), written when first seen and when their claims change.
    name: 'user_profiles',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      user_identifier: { type: 'text', notNull: true },
      given_name: { type: 'text' },
      surname: { type: 'text' },
      email: { type: 'text' },
      display_name: { type: 'text' },
      job_title: { type: 'text' },
      sort_name: { type: 'text', notNull: true },
      last_updated_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'user_identifier'],
    indexes: [{ name: 'user_profiles_name', columns: ['project_id', 'sort_name', 'user_identifier'] }],
  },
];
