import { SENTIMENT_QUALITY } from '../../analytics/sentiment.ts';
import type { ServerDeps } from '../deps.ts';
import type { ServerSpec } from '../spec.ts';
import { socialTools } from './tools.ts';
import { socialAlertTools } from './alerts.ts';
import { serverIcon } from '../icons.ts';

export function socialIntelligence(deps: ServerDeps): ServerSpec {
  return {
    name: 'social-intelligence',
    icon: serverIcon('social-intelligence'),
    title: 'Social Intelligence',
    description: 'What people say about crypto assets: mentions, sentiment, trending assets and terms, spikes and top posts.',
    chains: [],
    freshness: 'posts',
    dataFreshness:
      deps.social.name === 'snapshot'
        ? `Offline dataset of real posts: Reddit posts (2025-09-29 to 2025-12-06) and comments (to 2025-10-30) of crypto subreddits, and tweets of 10 crypto accounts (2011-07-04 to 2017-12-07). Windows default to the end of each platform's data, which every answer states; a window past 2025-10-30 says the comments are missing there. ${SENTIMENT_QUALITY}`
        : `Live from ${deps.social.name} (recent posts as the search returns them); tweets are not available live. ${SENTIMENT_QUALITY}`,
    tools: [...socialTools(deps), ...socialAlertTools(deps)],
  };
}
