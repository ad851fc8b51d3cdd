-- One OpenCode session, dumped from its opencode.db (see README.md).

CREATE TABLE `project` (
          `id` text PRIMARY KEY,
          `worktree` text NOT NULL,
          `vcs` text,
          `name` text,
          `icon_url` text,
          `icon_url_override` text,
          `icon_color` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_initialized` integer,
          `sandboxes` text NOT NULL,
          `commands` text
        );
INSERT INTO project (id, worktree, vcs, name, icon_url, icon_url_override, icon_color, time_created, time_updated, time_initialized, sandboxes, commands) VALUES ('global', '/', NULL, NULL, NULL, NULL, NULL, 1795793031710, 1795793070888, NULL, '[]', NULL);

CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created, time_updated, time_compacting, time_archived) VALUES ('ses_de264e0a6ffeqTTwISj6I4Zb0Z', 'global', NULL, NULL, 'nimble-nebula', '/home/user/work', 'tmp/TestHostsopencode2867215474/001/work', 'A conversation', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0, 9826, 92, 0, 57541, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'build', '{"id":"scripted-model","providerID":"scripted","variant":"default"}', 1795793035097, 1795793066321, NULL, NULL);

CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b2033001m7UfvqP4FCEKWA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793035315, 1795793039730, '{"role":"user","time":{"created":1795793035315},"agent":"build","model":{"providerID":"scripted","modelID":"scripted-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b2d7b001f2A6Pn4FJz0Lyn', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793038722, 1795793042518, '{"parentID":"msg_21d9b2033001m7UfvqP4FCEKWA","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9442,"input":9440,"output":2,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793038722,"completed":1795793042516},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b547c001WAgs2Wq5cwYnHy', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793048700, 1795793054700, '{"role":"user","time":{"created":1795793048700},"agent":"build","model":{"providerID":"scripted","modelID":"scripted-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b62f6001YHSD80p35lqeAN', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793052406, 1795793054646, '{"parentID":"msg_21d9b547c001WAgs2Wq5cwYnHy","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9502,"input":29,"output":33,"reasoning":0,"cache":{"write":0,"read":9440}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793052406,"completed":1795793054645},"finish":"tool-calls"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b6bbb0013qWiDeOCqaPGbm', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054651, 1795793054794, '{"parentID":"msg_21d9b547c001WAgs2Wq5cwYnHy","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9565,"input":90,"output":6,"reasoning":0,"cache":{"write":0,"read":9469}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793054651,"completed":1795793054794},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b7ff8001Gf5UYLFLOgZPlY', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793059832, 1795793065896, '{"role":"user","time":{"created":1795793059832},"agent":"build","model":{"providerID":"scripted","modelID":"scripted-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b8946001p0eoZLSOTPXOxG', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793062214, 1795793063712, '{"parentID":"msg_21d9b7ff8001Gf5UYLFLOgZPlY","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9603,"input":36,"output":8,"reasoning":0,"cache":{"write":0,"read":9559}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793062214,"completed":1795793063705},"finish":"tool-calls"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b8f25001l62EnfKmftPwsA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793063717, 1795793065331, '{"parentID":"msg_21d9b7ff8001Gf5UYLFLOgZPlY","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9735,"input":124,"output":16,"reasoning":0,"cache":{"write":0,"read":9595}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793063717,"completed":1795793065260},"finish":"tool-calls"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b95fb00118Hyz2gWYBURFz', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793065467, 1795793065848, '{"parentID":"msg_21d9b7ff8001Gf5UYLFLOgZPlY","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9784,"input":40,"output":25,"reasoning":0,"cache":{"write":0,"read":9719}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793065467,"completed":1795793065847},"finish":"tool-calls"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_21d9b977b001JJXIMzMXCBq5L6', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793065851, 1795793066123, '{"parentID":"msg_21d9b7ff8001Gf5UYLFLOgZPlY","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/work","root":"/"},"cost":0,"tokens":{"total":9828,"input":67,"output":2,"reasoning":0,"cache":{"write":0,"read":9759}},"modelID":"scripted-model","providerID":"scripted","time":{"created":1795793065851,"completed":1795793066112},"finish":"stop"}');

CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b203b0013pAI22DhpcIh08', 'msg_21d9b2033001m7UfvqP4FCEKWA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793035327, 1795793035333, '{"type":"text","text":"\"REMEMBER: the code word is PELICAN-4711. Just say noted.\""}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b3bfe0015Rsp05khnGPn0G', 'msg_21d9b2d7b001f2A6Pn4FJz0Lyn', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793042430, 1795793042481, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b3c34001RyN6WlnsrMgVwY', 'msg_21d9b2d7b001f2A6Pn4FJz0Lyn', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793042485, 1795793042489, '{"type":"text","text":"Noted.","time":{"start":1795793042484,"end":1795793042488}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b3c3b001mSOv2RCe5BJ9KZ', 'msg_21d9b2d7b001f2A6Pn4FJz0Lyn', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793042491, 1795793042492, '{"reason":"stop","type":"step-finish","tokens":{"total":9442,"input":9440,"output":2,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b547f001rx6M4g6lRMYI22', 'msg_21d9b547c001WAgs2Wq5cwYnHy', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793048711, 1795793048717, '{"type":"text","text":"\"FORK: ask a sub-agent for the code word.\""}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b6930001r8MieOBb3LIDMg', 'msg_21d9b62f6001YHSD80p35lqeAN', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054000, 1795793054008, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b697e001H7KrEVca63ab5c', 'msg_21d9b62f6001YHSD80p35lqeAN', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054078, 1795793054620, '{"type":"tool","tool":"superagents_superagents_task","callID":"call_7","state":{"status":"completed","input":{"agent":"general","description":"recall the code word","fork":true,"prompt":"What is the code word?"},"output":"Task uwa8wdlcxxs168m0 launched in the background (agent general, forked). Keep working: you will be notified when it ends. Its result: superagents_output with task_id \"uwa8wdlcxxs168m0\". The sub-agent starts with a digest of your OpenCode conversation (session ses_de264e0a6ffeqTTwISj6I4Zb0Z).","metadata":{"truncated":false},"title":"","time":{"start":1795793054104,"end":1795793054618}}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b6ba1001xDfLOSCOURmu5v', 'msg_21d9b62f6001YHSD80p35lqeAN', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054625, 1795793054626, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":9502,"input":29,"output":33,"reasoning":0,"cache":{"write":0,"read":9440}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b6c3b001It6y8qQCKxOrtD', 'msg_21d9b6bbb0013qWiDeOCqaPGbm', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054779, 1795793054780, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b6c3e001WlcMTRMe3qqOPU', 'msg_21d9b6bbb0013qWiDeOCqaPGbm', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054782, 1795793054788, '{"type":"text","text":"The sub-agent is on it.","time":{"start":1795793054782,"end":1795793054787}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b6c45001FluqDuG4WSDb9v', 'msg_21d9b6bbb0013qWiDeOCqaPGbm', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793054789, 1795793054790, '{"reason":"stop","type":"step-finish","tokens":{"total":9565,"input":90,"output":6,"reasoning":0,"cache":{"write":0,"read":9469}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b7ffb001rHH9TA4KYE4zhe', 'msg_21d9b7ff8001Gf5UYLFLOgZPlY', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793059945, 1795793059947, '{"type":"text","text":"\"CHECK uwa8wdlcxxs168m0: how is the sub-agent doing?\""}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b8e59001E060rSD3j2NVZF', 'msg_21d9b8946001p0eoZLSOTPXOxG', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793063513, 1795793063527, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b8e74001QF77jHNnbxhQgE', 'msg_21d9b8946001p0eoZLSOTPXOxG', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793063540, 1795793063653, '{"type":"tool","tool":"superagents_superagents_list","callID":"call_12","state":{"status":"completed","input":{},"output":"[superagents] Background tasks that ended since your last superagents call:\n\n✓ Agent \"recall the code word\" finished in 1s.\nTask Progress: 1/1\nBackground task uwa8wdlcxxs168m0 (\"recall the code word\") finished. Read its result with superagents_output (task_id \"uwa8wdlcxxs168m0\").\n\n---\n\nBackground tasks (1):\n- uwa8wdlcxxs168m0 (forked) [completed] \"recall the code word\", agent general, took 1s, result unread","metadata":{"truncated":false},"title":"","time":{"start":1795793063598,"end":1795793063651}}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b8eee001DollfNwoAFn646', 'msg_21d9b8946001p0eoZLSOTPXOxG', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793063667, 1795793063669, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":9603,"input":36,"output":8,"reasoning":0,"cache":{"write":0,"read":9559}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b92cc0012gvbvlvlUbVAI7', 'msg_21d9b8f25001l62EnfKmftPwsA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793064652, 1795793064654, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b92dd001Gl3gV24yq2tkFR', 'msg_21d9b8f25001l62EnfKmftPwsA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793064669, 1795793064844, '{"type":"tool","tool":"superagents_superagents_output","callID":"call_15","state":{"status":"completed","input":{"task_id":"uwa8wdlcxxs168m0"},"output":"Task uwa8wdlcxxs168m0 (\"recall the code word\") completed in 1s.\n\nResult:\nSAW:PELICAN-4711","metadata":{"truncated":false},"title":"","time":{"start":1795793064698,"end":1795793064781}}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b93ee001GnhjbIu7LAgBSs', 'msg_21d9b8f25001l62EnfKmftPwsA', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793064942, 1795793064957, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":9735,"input":124,"output":16,"reasoning":0,"cache":{"write":0,"read":9595}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b974b001vr6F1t5HQGaxrl', 'msg_21d9b95fb00118Hyz2gWYBURFz', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793065803, 1795793065804, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b974e001hyoJgqYO7Od4Mp', 'msg_21d9b95fb00118Hyz2gWYBURFz', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793065806, 1795793065838, '{"type":"tool","tool":"superagents_superagents_task","callID":"call_18","state":{"status":"completed","input":{"prompt":"Say the code word once more.","resume":"uwa8wdlcxxs168m0"},"output":"Task uwa8wdlcxxs168m0 is resumed (resume #1) with your follow-up, in its own session, in the background. You will be notified when it answers; superagents_output with block: true waits for the response.","metadata":{"truncated":false},"title":"","time":{"start":1795793065816,"end":1795793065837}}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b9771001YevyOdMwrmgw6r', 'msg_21d9b95fb00118Hyz2gWYBURFz', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793065842, 1795793065842, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":9784,"input":40,"output":25,"reasoning":0,"cache":{"write":0,"read":9719}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b9844001ODwwtZ5649o1mk', 'msg_21d9b977b001JJXIMzMXCBq5L6', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793066052, 1795793066056, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b9850001cEHFylEr1eD5Qr', 'msg_21d9b977b001JJXIMzMXCBq5L6', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793066064, 1795793066085, '{"type":"text","text":"Done.","time":{"start":1795793066064,"end":1795793066077}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_21d9b986d001hclsraw6hrsf6Y', 'msg_21d9b977b001JJXIMzMXCBq5L6', 'ses_de264e0a6ffeqTTwISj6I4Zb0Z', 1795793066093, 1795793066094, '{"reason":"stop","type":"step-finish","tokens":{"total":9828,"input":67,"output":2,"reasoning":0,"cache":{"write":0,"read":9759}},"cost":0}');

