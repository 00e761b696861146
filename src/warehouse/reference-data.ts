/**
 * Literal reference data behind the demo warehouse: real names, codes and
 * user-agent strings that the demo generator (demo-data.ts and demo/) inlines into its SQL. Nothing here
 * depends on the seed; the generator decides who uses which entry.
 */

/** Apple Podcasts top-level categories, with words for made-up show slugs and episode titles. */
export interface Category {
  name: string;
  /** Single lowercase words, distinct across all categories, so generated slugs never collide. */
  slugNouns: string[];
  /** Episode topics in title case. */
  topics: string[];
}

export const CATEGORIES: Category[] = [
  {
    name: 'Arts',
    slugNouns: ['canvas', 'gallery', 'studio', 'stanza', 'sketchbook', 'brushstroke', 'museum', 'palette', 'atelier', 'verse', 'lens', 'easel'],
    topics: ['The Art of the Short Story', 'Portrait Photography', 'Street Art', 'Writing Your First Novel', 'Museums After Dark', 'Color Theory', 'The Poetry Revival', 'Design That Lasts'],
  },
  {
    name: 'Business',
    slugNouns: ['ledger', 'boardroom', 'startup', 'margin', 'pitch', 'founder', 'capital', 'ventures', 'hustle', 'dividend', 'market', 'equity'],
    topics: ['Raising a Seed Round', 'Pricing Power', 'The Four-Day Week', 'Remote Teams', 'Interest Rates', 'Building a Brand', 'Supply Chains', 'Negotiation'],
  },
  {
    name: 'Comedy',
    slugNouns: ['banter', 'punchline', 'giggle', 'hecklers', 'roast', 'sitcom', 'improv', 'blooper', 'chuckle', 'nonsense', 'mischief', 'shenanigans'],
    topics: ['Worst Vacation Ever', 'Awkward Dinner Parties', 'Our Parents Try TikTok', 'Bad Dating Advice', 'The Office Birthday Cake', 'Conspiracy Corner', 'Listener Confessions', 'Terrible First Jobs'],
  },
  {
    name: 'Education',
    slugNouns: ['classroom', 'syllabus', 'lecture', 'flashcard', 'tutor', 'campus', 'homework', 'notebook', 'chalkboard', 'scholar', 'primer', 'study'],
    topics: ['How Memory Works', 'Learning a Language at 40', 'Sleep and Study', 'Speed Reading Myths', 'Note-Taking Systems', 'Grammar Rules Worth Breaking', 'Math Anxiety', 'Critical Thinking'],
  },
  {
    name: 'Fiction',
    slugNouns: ['saga', 'chronicle', 'mystery', 'odyssey', 'tales', 'legend', 'fable', 'nocturne', 'haunting', 'whisper', 'voyage', 'cipher'],
    topics: ['The Arrival', 'The Locked Room', 'Signals from the Deep', 'A Door in the Fog', 'The Last Broadcast', 'Night Train', 'The Cartographer', 'Dead Air'],
  },
  {
    name: 'Government',
    slugNouns: ['policy', 'ballot', 'capitol', 'senate', 'docket', 'caucus', 'mandate', 'charter', 'council', 'statute', 'civics', 'precinct'],
    topics: ['The Budget Showdown', 'Inside the Supreme Court', 'Why Local Elections Matter', 'How a Bill Becomes Law', 'Election Security', 'The Filibuster', 'Public Transit Funding', 'Housing Policy'],
  },
  {
    name: 'Health & Fitness',
    slugNouns: ['wellness', 'stride', 'pulse', 'vitality', 'mobility', 'nutrition', 'recovery', 'strength', 'balance', 'breath', 'endurance', 'habits'],
    topics: ['Zone 2 Training', 'Sleep Hygiene', 'Protein Myths', 'Marathon Prep', 'Gut Health', 'Strength After 50', 'Breathwork Basics', 'Intermittent Fasting'],
  },
  {
    name: 'History',
    slugNouns: ['empire', 'dynasty', 'archive', 'relic', 'antiquity', 'frontier', 'centuries', 'artifact', 'monarchs', 'revolution', 'ancients', 'almanac'],
    topics: ['The Fall of Rome', 'The Silk Road', 'The Cuban Missile Crisis', 'Women of the Resistance', 'The Hanseatic League', 'The Space Race', 'Lost Cities', 'The Printing Press'],
  },
  {
    name: 'Kids & Family',
    slugNouns: ['storytime', 'playground', 'bedtime', 'lullaby', 'sprout', 'treehouse', 'crayon', 'adventure', 'giggles', 'puddle', 'kiddos', 'nursery'],
    topics: ['Why the Sky Is Blue', 'The Brave Little Turtle', 'Screen Time Rules', 'Toddler Tantrums', 'Dinosaur Facts', 'Homework Without Tears', 'Raising Readers', 'Family Road Trips'],
  },
  {
    name: 'Leisure',
    slugNouns: ['hobby', 'garden', 'workshop', 'tabletop', 'crafts', 'angler', 'trails', 'kitchen', 'puzzle', 'collector', 'roadtrip', 'campfire'],
    topics: ['Sourdough Starters', 'Board Game Night', 'Fly Fishing Basics', 'Building a Gaming PC', 'Container Gardening', 'Retro Video Games', 'Knitting for Beginners', 'National Parks'],
  },
  {
    name: 'Music',
    slugNouns: ['melody', 'backbeat', 'encore', 'riff', 'vinyl', 'setlist', 'harmony', 'mixtape', 'chorus', 'groove', 'remix', 'bassline'],
    topics: ['The Making of a Classic Album', 'Songwriting Secrets', 'Jazz for Beginners', 'Touring on a Budget', 'The Synth Revolution', 'Behind the Lyrics', 'Festival Season', 'Hip-Hop at 50'],
  },
  {
    name: 'News',
    slugNouns: ['headlines', 'dispatch', 'bulletin', 'newsroom', 'frontpage', 'wire', 'digest', 'roundup', 'byline', 'deadline', 'agenda', 'report'],
    topics: ['The Week in Review', 'Election Night Special', 'The Inflation Puzzle', 'The Climate Summit', 'Tech Layoffs', 'The Housing Crunch', 'Global Markets Wobble', 'Wildfire Season'],
  },
  {
    name: 'Religion & Spirituality',
    slugNouns: ['faith', 'grace', 'sanctuary', 'scripture', 'prayer', 'pilgrim', 'spirit', 'devotion', 'meditation', 'psalm', 'mercy', 'stillness'],
    topics: ['Finding Stillness', 'Forgiveness', 'Ancient Wisdom for Modern Life', 'Prayer in Daily Life', 'Doubt and Belief', 'The Practice of Gratitude', 'Sabbath Rest', 'Mindful Mornings'],
  },
  {
    name: 'Science',
    slugNouns: ['quantum', 'cosmos', 'molecule', 'neuron', 'galaxy', 'fossil', 'element', 'orbit', 'genome', 'particle', 'hypothesis', 'telescope'],
    topics: ['Black Holes', 'CRISPR', 'The Octopus Mind', 'Dark Matter', 'Deep Sea Creatures', 'The Origins of Life', 'Fusion Energy', 'Climate Models'],
  },
  {
    name: 'Society & Culture',
    slugNouns: ['culture', 'community', 'identity', 'generation', 'neighbors', 'dialogue', 'folklore', 'etiquette', 'citizens', 'tradition', 'lifestyle', 'kinship'],
    topics: ['The Loneliness Epidemic', 'Gen Z at Work', 'The Ethics of AI', 'Modern Dating', 'Why We Tip', 'Friendship After 30', 'The Meaning of Home', 'Everyday Rituals'],
  },
  {
    name: 'Sports',
    slugNouns: ['playbook', 'sideline', 'overtime', 'huddle', 'pitchside', 'dugout', 'rally', 'stadium', 'scoreboard', 'fastbreak', 'paddock', 'podium'],
    topics: ['Trade Deadline Winners', 'The Transfer Window', 'Playoff Preview', 'Underdogs', 'Inside the Draft', 'The Greatest Comeback', 'Fantasy Football Strategy', 'Olympic Dreams'],
  },
  {
    name: 'Technology',
    slugNouns: ['bytes', 'circuit', 'kernel', 'pixel', 'silicon', 'protocol', 'compiler', 'bandwidth', 'cloud', 'terminal', 'gadget', 'algorithm'],
    topics: ['The AI Gold Rush', 'Open Source Sustainability', 'Chip Wars', 'Quantum Computing Hype', 'Right to Repair', 'The Passwordless Future', 'Building with LLMs', 'Privacy by Design'],
  },
  {
    name: 'True Crime',
    slugNouns: ['alibi', 'verdict', 'evidence', 'suspect', 'witness', 'casefile', 'motive', 'testimony', 'forensics', 'interrogation', 'lineup', 'manhunt'],
    topics: ['The Disappearance', 'A Killer in the Suburbs', 'The Wrong Man', 'Heist at Midnight', 'The Confession', 'Cold Case Reopened', 'The Con Artist', 'Missing in the Mountains'],
  },
  {
    name: 'TV & Film',
    slugNouns: ['screen', 'reel', 'premiere', 'sequel', 'popcorn', 'trailer', 'cinema', 'binge', 'spoiler', 'matinee', 'montage', 'showrunner'],
    topics: ['Awards Season Predictions', 'The Finale Everyone Hated', 'Rewatching the Classics', 'Behind the Casting', 'Franchise Fatigue', 'Best Shows of the Year', 'Indie Gems', 'Stunt Work'],
  },
];

/** Spotify publishes fewer category charts; these use the Apple names above. */
export const SPOTIFY_CATEGORIES = [
  'Business', 'Comedy', 'Education', 'Health & Fitness', 'History',
  'News', 'Society & Culture', 'Sports', 'Technology', 'True Crime',
];

/** Generated chart-show slugs: an adjective and a category noun in one of these shapes. */
export const SLUG_ADJECTIVES = [
  'curious', 'modern', 'hidden', 'bold', 'quiet', 'deep', 'bright', 'wild',
  'honest', 'little', 'big', 'late', 'open', 'lucky', 'restless', 'simple',
  'urban', 'golden', 'midnight', 'electric', 'second', 'stray', 'northern', 'steady',
];
export const SLUG_PATTERNS = [
  '{a}-{n}', 'the-{a}-{n}-show', '{a}-{n}-daily', 'the-{a}-{n}-podcast',
  '{a}-{n}-hour', '{a}-{n}-club', '{a}-{n}-radio', 'the-{a}-{n}',
];

/** Episode titles: {topic} from the show's category, {name} a guest, {n} the episode number, {part} 1–3. */
export const EPISODE_TITLE_TEMPLATES = [
  '{topic}', '{topic}, Explained', '{topic} with {name}', 'Ep. {n}: {topic}',
  '{topic} (Part {part})', 'Listener Questions: {topic}', 'Revisited: {topic}', '{name} on {topic}',
];
export const GUEST_FIRST_NAMES = ['Maya', 'James', 'Priya', 'Daniel', 'Sofia', 'Marcus', 'Hannah', 'Leo', 'Aisha', 'Tom', 'Elena', 'Kenji', 'Grace', 'Omar', 'Chloe', 'Ben'];
export const GUEST_LAST_NAMES = ['Okafor', 'Lindqvist', 'Patel', 'Moreno', 'Chen', 'Walsh', 'Fischer', 'Nakamura', 'Brooks', 'Haddad', 'Rossi', 'Bennett', 'Kowalski', 'Silva', 'Murphy', 'Adeyemi'];

/** The shows we track; everything else about them (ids, tokens, schedule) comes from the seed. */
/**
 * The customers: podcast networks, each owning a quarter of the tracked shows
 * (show i belongs to DEMO_ACCOUNTS[i % 4]) and with them those shows' raw
 * requests, downloads, smart links and websites.
 */
export const DEMO_ACCOUNTS = ['northwind-audio', 'harbor-lane-media', 'bright-signal', 'cedar-street-studios'] as const;

export const TRACKED_PODCASTS: { title: string; category: string }[] = [
  { title: 'The Daily Brief', category: 'News' },
  { title: 'World Desk', category: 'News' },
  { title: 'Market Movers', category: 'Business' },
  { title: 'Startup Diaries', category: 'Business' },
  { title: 'Money Talks Tonight', category: 'Business' },
  { title: 'Code & Coffee', category: 'Technology' },
  { title: 'Future Stack', category: 'Technology' },
  { title: 'Open Source Hour', category: 'Technology' },
  { title: 'Cold Trail', category: 'True Crime' },
  { title: 'Vanished in the Valley', category: 'True Crime' },
  { title: 'Two Idiots and a Mic', category: 'Comedy' },
  { title: 'Side Eye Comedy Hour', category: 'Comedy' },
  { title: 'Echoes of Empire', category: 'History' },
  { title: 'The Forgotten Front', category: 'History' },
  { title: 'Mindful Miles', category: 'Health & Fitness' },
  { title: 'Lift Heavy, Live Long', category: 'Health & Fitness' },
  { title: 'Quantum Curious', category: 'Science' },
  { title: 'Deep Field', category: 'Science' },
  { title: 'Sideline Report', category: 'Sports' },
  { title: 'Full Time Football', category: 'Sports' },
  { title: 'Bookmarked', category: 'Arts' },
  { title: 'Canvas & Clay', category: 'Arts' },
  { title: 'Fireside Faith', category: 'Religion & Spirituality' },
  { title: 'Stillwater Sessions', category: 'Religion & Spirituality' },
  { title: 'Parenting in Real Time', category: 'Kids & Family' },
  { title: 'Bedtime Story Bus', category: 'Kids & Family' },
  { title: 'Midnight Radio Theater', category: 'Fiction' },
  { title: 'The Lighthouse Tapes', category: 'Fiction' },
  { title: 'Capitol Dispatch', category: 'Government' },
  { title: 'Screen Time Recap', category: 'TV & Film' },
  { title: 'Reel Talk Tonight', category: 'TV & Film' },
  { title: 'Vinyl Hours', category: 'Music' },
  { title: 'Backstage Pass', category: 'Music' },
  { title: 'Weekend Project', category: 'Leisure' },
  { title: 'The Garden Shed', category: 'Leisure' },
  { title: 'Learn Spanish Slowly', category: 'Education' },
  { title: 'Explained in Ten', category: 'Education' },
  { title: 'Modern Manners', category: 'Society & Culture' },
  { title: 'City Stories', category: 'Society & Culture' },
  { title: 'The Long Table', category: 'Society & Culture' },
];

/** Where the audio files live behind the tracking prefix. */
export const MEDIA_HOSTS = ['media.example-host.com', 'cdn.example-audio.net', 'traffic.example-pods.io'];
export const TRACKING_PREFIX = 'https://pfx.example-analytics.net/e/';
export const LINK_DOMAIN = 'https://links.example.fm/';

export interface Country {
  /** ISO 3166-1 alpha-2, lowercase as Apple's chart URLs use it. */
  code: string;
  name: string;
  continent: string;
  /** Accept-Language header a listener there typically sends. */
  acceptLanguage: string;
  /** Language names with their share among link viewers from the country. */
  languages: [string, number][];
  /** Share of podcast listeners; 0 for countries that only host data centres. */
  listenerShare: number;
  /** First octets of IPv4 ranges allocated to the country's ISPs. */
  ipFirstOctets: number[];
  /** Residential ISPs (the `org` of an IP) with their market share. */
  isps: [string, number][];
}

export const COUNTRIES: Country[] = [
  { code: 'us', name: 'United States', continent: 'North America', acceptLanguage: 'en-US', languages: [['English', 0.87], ['Spanish', 0.13]], listenerShare: 42, ipFirstOctets: [24, 50, 67, 68, 71, 73, 76, 98, 99, 108, 174], isps: [['Comcast Cable Communications', 0.3], ['Charter Communications', 0.22], ['AT&T Services', 0.18], ['Verizon Communications', 0.15], ['T-Mobile USA', 0.1], ['Cox Communications', 0.05]] },
  { code: 'gb', name: 'United Kingdom', continent: 'Europe', acceptLanguage: 'en-GB', languages: [['English', 1]], listenerShare: 12, ipFirstOctets: [31, 81, 86, 90, 109], isps: [['British Telecommunications PLC', 0.32], ['Sky UK Limited', 0.24], ['Virgin Media Limited', 0.2], ['Vodafone Limited', 0.12], ['EE Limited', 0.12]] },
  { code: 'ca', name: 'Canada', continent: 'North America', acceptLanguage: 'en-CA', languages: [['English', 0.78], ['French', 0.22]], listenerShare: 7, ipFirstOctets: [24, 70, 99, 142, 184], isps: [['Rogers Communications Canada', 0.35], ['Bell Canada', 0.35], ['TELUS Communications', 0.3]] },
  { code: 'au', name: 'Australia', continent: 'Oceania', acceptLanguage: 'en-AU', languages: [['English', 1]], listenerShare: 6, ipFirstOctets: [1, 49, 58, 101, 120, 124], isps: [['Telstra Limited', 0.45], ['TPG Telecom Limited', 0.3], ['Optus Networks', 0.25]] },
  { code: 'de', name: 'Germany', continent: 'Europe', acceptLanguage: 'de-DE', languages: [['German', 0.88], ['English', 0.12]], listenerShare: 7, ipFirstOctets: [79, 84, 87, 91, 93], isps: [['Deutsche Telekom AG', 0.45], ['Vodafone GmbH', 0.3], ['Telefonica Germany', 0.15], ['1&1 Versatel', 0.1]] },
  { code: 'fr', name: 'France', continent: 'Europe', acceptLanguage: 'fr-FR', languages: [['French', 0.9], ['English', 0.1]], listenerShare: 2.5, ipFirstOctets: [2, 78, 82, 86, 90], isps: [['Orange S.A.', 0.4], ['Free SAS', 0.25], ['SFR SA', 0.2], ['Bouygues Telecom', 0.15]] },
  { code: 'es', name: 'Spain', continent: 'Europe', acceptLanguage: 'es-ES', languages: [['Spanish', 0.88], ['Catalan', 0.05], ['English', 0.07]], listenerShare: 2.5, ipFirstOctets: [79, 80, 83, 88], isps: [['Telefonica de Espana', 0.45], ['Vodafone Spain', 0.3], ['Orange Espagne', 0.25]] },
  { code: 'it', name: 'Italy', continent: 'Europe', acceptLanguage: 'it-IT', languages: [['Italian', 0.9], ['English', 0.1]], listenerShare: 1.5, ipFirstOctets: [79, 87, 93, 151], isps: [['Telecom Italia S.p.A.', 0.5], ['Vodafone Italia S.p.A.', 0.3], ['Fastweb SpA', 0.2]] },
  { code: 'nl', name: 'Netherlands', continent: 'Europe', acceptLanguage: 'nl-NL', languages: [['Dutch', 0.75], ['English', 0.25]], listenerShare: 2.5, ipFirstOctets: [77, 84, 86, 145], isps: [['KPN B.V.', 0.45], ['Ziggo B.V.', 0.4], ['Odido Netherlands', 0.15]] },
  { code: 'se', name: 'Sweden', continent: 'Europe', acceptLanguage: 'sv-SE', languages: [['Swedish', 0.7], ['English', 0.3]], listenerShare: 2, ipFirstOctets: [78, 81, 83, 90], isps: [['Telia Company AB', 0.5], ['Tele2 Sverige AB', 0.3], ['Bahnhof AB', 0.2]] },
  { code: 'ie', name: 'Ireland', continent: 'Europe', acceptLanguage: 'en-IE', languages: [['English', 0.95], ['Irish', 0.05]], listenerShare: 1.5, ipFirstOctets: [46, 78, 86, 89], isps: [['Eircom Limited', 0.45], ['Virgin Media Ireland', 0.3], ['Vodafone Ireland', 0.25]] },
  { code: 'nz', name: 'New Zealand', continent: 'Oceania', acceptLanguage: 'en-NZ', languages: [['English', 1]], listenerShare: 1, ipFirstOctets: [49, 115, 122, 203], isps: [['Spark New Zealand', 0.55], ['One New Zealand', 0.45]] },
  { code: 'br', name: 'Brazil', continent: 'South America', acceptLanguage: 'pt-BR', languages: [['Portuguese', 0.95], ['English', 0.05]], listenerShare: 3, ipFirstOctets: [177, 179, 187, 189, 201], isps: [['Claro NXT Telecomunicacoes', 0.5], ['Telefonica Brasil S.A.', 0.5]] },
  { code: 'mx', name: 'Mexico', continent: 'North America', acceptLanguage: 'es-MX', languages: [['Spanish', 0.95], ['English', 0.05]], listenerShare: 2, ipFirstOctets: [187, 189, 201], isps: [['Uninet S.A. de C.V.', 0.6], ['Total Play Telecomunicaciones', 0.4]] },
  { code: 'in', name: 'India', continent: 'Asia', acceptLanguage: 'en-IN', languages: [['English', 0.7], ['Hindi', 0.3]], listenerShare: 4, ipFirstOctets: [49, 103, 106, 117], isps: [['Reliance Jio Infocomm Limited', 0.6], ['Bharti Airtel Ltd.', 0.4]] },
  { code: 'jp', name: 'Japan', continent: 'Asia', acceptLanguage: 'ja-JP', languages: [['Japanese', 0.9], ['English', 0.1]], listenerShare: 0.5, ipFirstOctets: [60, 106, 111, 126, 153], isps: [['NTT Communications Corporation', 0.5], ['KDDI Corporation', 0.3], ['SoftBank Corp.', 0.2]] },
  { code: 'za', name: 'South Africa', continent: 'Africa', acceptLanguage: 'en-ZA', languages: [['English', 0.8], ['Afrikaans', 0.2]], listenerShare: 1.5, ipFirstOctets: [41, 102, 105, 196], isps: [['Vodacom', 0.5], ['MTN SA', 0.5]] },
  { code: 'sg', name: 'Singapore', continent: 'Asia', acceptLanguage: 'en-SG', languages: [['English', 1]], listenerShare: 0, ipFirstOctets: [], isps: [] },
  { code: 'ro', name: 'Romania', continent: 'Europe', acceptLanguage: 'ro-RO', languages: [['Romanian', 1]], listenerShare: 0, ipFirstOctets: [], isps: [] },
];

/** Chart countries in the order they are added as the scale grows. */
export const APPLE_CHART_COUNTRIES = ['us', 'gb', 'ca', 'au', 'de', 'fr', 'es', 'br', 'mx', 'in', 'nl', 'se', 'ie', 'nz', 'it', 'jp'];
export const SPOTIFY_CHART_COUNTRIES = ['us', 'gb', 'de', 'br', 'ca', 'au', 'mx', 'es', 'fr', 'se'];

export interface City {
  name: string;
  country: string;
  lat: number;
  lon: number;
  timezone: string;
  /** Standard-time offset; the generator ignores daylight saving. */
  utcOffsetMinutes: number;
  /** Share of the country's listeners; 0 for data-centre towns. */
  weight: number;
}

export const CITIES: City[] = [
  { name: 'New York', country: 'us', lat: 40.7128, lon: -74.006, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 20 },
  { name: 'Los Angeles', country: 'us', lat: 34.0522, lon: -118.2437, timezone: 'America/Los_Angeles', utcOffsetMinutes: -480, weight: 12 },
  { name: 'Chicago', country: 'us', lat: 41.8781, lon: -87.6298, timezone: 'America/Chicago', utcOffsetMinutes: -360, weight: 9 },
  { name: 'Houston', country: 'us', lat: 29.7604, lon: -95.3698, timezone: 'America/Chicago', utcOffsetMinutes: -360, weight: 6 },
  { name: 'Phoenix', country: 'us', lat: 33.4484, lon: -112.074, timezone: 'America/Phoenix', utcOffsetMinutes: -420, weight: 4 },
  { name: 'Philadelphia', country: 'us', lat: 39.9526, lon: -75.1652, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 5 },
  { name: 'San Francisco', country: 'us', lat: 37.7749, lon: -122.4194, timezone: 'America/Los_Angeles', utcOffsetMinutes: -480, weight: 6 },
  { name: 'Seattle', country: 'us', lat: 47.6062, lon: -122.3321, timezone: 'America/Los_Angeles', utcOffsetMinutes: -480, weight: 5 },
  { name: 'Austin', country: 'us', lat: 30.2672, lon: -97.7431, timezone: 'America/Chicago', utcOffsetMinutes: -360, weight: 4 },
  { name: 'Boston', country: 'us', lat: 42.3601, lon: -71.0589, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 5 },
  { name: 'Denver', country: 'us', lat: 39.7392, lon: -104.9903, timezone: 'America/Denver', utcOffsetMinutes: -420, weight: 4 },
  { name: 'Atlanta', country: 'us', lat: 33.749, lon: -84.388, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 5 },
  { name: 'Miami', country: 'us', lat: 25.7617, lon: -80.1918, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 4 },
  { name: 'Minneapolis', country: 'us', lat: 44.9778, lon: -93.265, timezone: 'America/Chicago', utcOffsetMinutes: -360, weight: 3 },
  { name: 'Portland', country: 'us', lat: 45.5152, lon: -122.6784, timezone: 'America/Los_Angeles', utcOffsetMinutes: -480, weight: 3 },
  { name: 'Nashville', country: 'us', lat: 36.1627, lon: -86.7816, timezone: 'America/Chicago', utcOffsetMinutes: -360, weight: 3 },
  { name: 'Ashburn', country: 'us', lat: 39.0438, lon: -77.4874, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 0 },
  { name: 'Mountain View', country: 'us', lat: 37.3861, lon: -122.0839, timezone: 'America/Los_Angeles', utcOffsetMinutes: -480, weight: 0 },
  { name: 'Boydton', country: 'us', lat: 36.6677, lon: -78.3875, timezone: 'America/New_York', utcOffsetMinutes: -300, weight: 0 },
  { name: 'London', country: 'gb', lat: 51.5074, lon: -0.1278, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 40 },
  { name: 'Manchester', country: 'gb', lat: 53.4808, lon: -2.2426, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 12 },
  { name: 'Birmingham', country: 'gb', lat: 52.4862, lon: -1.8904, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 10 },
  { name: 'Leeds', country: 'gb', lat: 53.8008, lon: -1.5491, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 6 },
  { name: 'Glasgow', country: 'gb', lat: 55.8642, lon: -4.2518, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 7 },
  { name: 'Edinburgh', country: 'gb', lat: 55.9533, lon: -3.1883, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 6 },
  { name: 'Bristol', country: 'gb', lat: 51.4545, lon: -2.5879, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 6 },
  { name: 'Liverpool', country: 'gb', lat: 53.4084, lon: -2.9916, timezone: 'Europe/London', utcOffsetMinutes: 0, weight: 5 },
  { name: 'Toronto', country: 'ca', lat: 43.6532, lon: -79.3832, timezone: 'America/Toronto', utcOffsetMinutes: -300, weight: 35 },
  { name: 'Montreal', country: 'ca', lat: 45.5019, lon: -73.5674, timezone: 'America/Toronto', utcOffsetMinutes: -300, weight: 20 },
  { name: 'Vancouver', country: 'ca', lat: 49.2827, lon: -123.1207, timezone: 'America/Vancouver', utcOffsetMinutes: -480, weight: 20 },
  { name: 'Calgary', country: 'ca', lat: 51.0447, lon: -114.0719, timezone: 'America/Edmonton', utcOffsetMinutes: -420, weight: 12 },
  { name: 'Ottawa', country: 'ca', lat: 45.4215, lon: -75.6972, timezone: 'America/Toronto', utcOffsetMinutes: -300, weight: 10 },
  { name: 'Sydney', country: 'au', lat: -33.8688, lon: 151.2093, timezone: 'Australia/Sydney', utcOffsetMinutes: 600, weight: 40 },
  { name: 'Melbourne', country: 'au', lat: -37.8136, lon: 144.9631, timezone: 'Australia/Melbourne', utcOffsetMinutes: 600, weight: 35 },
  { name: 'Brisbane', country: 'au', lat: -27.4698, lon: 153.0251, timezone: 'Australia/Brisbane', utcOffsetMinutes: 600, weight: 15 },
  { name: 'Perth', country: 'au', lat: -31.9505, lon: 115.8605, timezone: 'Australia/Perth', utcOffsetMinutes: 480, weight: 10 },
  { name: 'Berlin', country: 'de', lat: 52.52, lon: 13.405, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 30 },
  { name: 'Hamburg', country: 'de', lat: 53.5511, lon: 9.9937, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 18 },
  { name: 'Munich', country: 'de', lat: 48.1351, lon: 11.582, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 18 },
  { name: 'Cologne', country: 'de', lat: 50.9375, lon: 6.9603, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 14 },
  { name: 'Frankfurt', country: 'de', lat: 50.1109, lon: 8.6821, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 12 },
  { name: 'Stuttgart', country: 'de', lat: 48.7758, lon: 9.1829, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 8 },
  { name: 'Falkenstein', country: 'de', lat: 50.4779, lon: 12.3713, timezone: 'Europe/Berlin', utcOffsetMinutes: 60, weight: 0 },
  { name: 'Paris', country: 'fr', lat: 48.8566, lon: 2.3522, timezone: 'Europe/Paris', utcOffsetMinutes: 60, weight: 50 },
  { name: 'Lyon', country: 'fr', lat: 45.764, lon: 4.8357, timezone: 'Europe/Paris', utcOffsetMinutes: 60, weight: 20 },
  { name: 'Marseille', country: 'fr', lat: 43.2965, lon: 5.3698, timezone: 'Europe/Paris', utcOffsetMinutes: 60, weight: 15 },
  { name: 'Toulouse', country: 'fr', lat: 43.6047, lon: 1.4442, timezone: 'Europe/Paris', utcOffsetMinutes: 60, weight: 15 },
  { name: 'Roubaix', country: 'fr', lat: 50.6942, lon: 3.1746, timezone: 'Europe/Paris', utcOffsetMinutes: 60, weight: 0 },
  { name: 'Madrid', country: 'es', lat: 40.4168, lon: -3.7038, timezone: 'Europe/Madrid', utcOffsetMinutes: 60, weight: 45 },
  { name: 'Barcelona', country: 'es', lat: 41.3874, lon: 2.1686, timezone: 'Europe/Madrid', utcOffsetMinutes: 60, weight: 40 },
  { name: 'Valencia', country: 'es', lat: 39.4699, lon: -0.3763, timezone: 'Europe/Madrid', utcOffsetMinutes: 60, weight: 15 },
  { name: 'Milan', country: 'it', lat: 45.4642, lon: 9.19, timezone: 'Europe/Rome', utcOffsetMinutes: 60, weight: 50 },
  { name: 'Rome', country: 'it', lat: 41.9028, lon: 12.4964, timezone: 'Europe/Rome', utcOffsetMinutes: 60, weight: 50 },
  { name: 'Amsterdam', country: 'nl', lat: 52.3676, lon: 4.9041, timezone: 'Europe/Amsterdam', utcOffsetMinutes: 60, weight: 60 },
  { name: 'Rotterdam', country: 'nl', lat: 51.9244, lon: 4.4777, timezone: 'Europe/Amsterdam', utcOffsetMinutes: 60, weight: 25 },
  { name: 'Utrecht', country: 'nl', lat: 52.0907, lon: 5.1214, timezone: 'Europe/Amsterdam', utcOffsetMinutes: 60, weight: 15 },
  { name: 'Stockholm', country: 'se', lat: 59.3293, lon: 18.0686, timezone: 'Europe/Stockholm', utcOffsetMinutes: 60, weight: 60 },
  { name: 'Gothenburg', country: 'se', lat: 57.7089, lon: 11.9746, timezone: 'Europe/Stockholm', utcOffsetMinutes: 60, weight: 40 },
  { name: 'Dublin', country: 'ie', lat: 53.3498, lon: -6.2603, timezone: 'Europe/Dublin', utcOffsetMinutes: 0, weight: 75 },
  { name: 'Cork', country: 'ie', lat: 51.8985, lon: -8.4756, timezone: 'Europe/Dublin', utcOffsetMinutes: 0, weight: 25 },
  { name: 'Auckland', country: 'nz', lat: -36.8509, lon: 174.7645, timezone: 'Pacific/Auckland', utcOffsetMinutes: 720, weight: 65 },
  { name: 'Wellington', country: 'nz', lat: -41.2866, lon: 174.7756, timezone: 'Pacific/Auckland', utcOffsetMinutes: 720, weight: 35 },
  { name: 'São Paulo', country: 'br', lat: -23.5505, lon: -46.6333, timezone: 'America/Sao_Paulo', utcOffsetMinutes: -180, weight: 60 },
  { name: 'Rio de Janeiro', country: 'br', lat: -22.9068, lon: -43.1729, timezone: 'America/Sao_Paulo', utcOffsetMinutes: -180, weight: 40 },
  { name: 'Mexico City', country: 'mx', lat: 19.4326, lon: -99.1332, timezone: 'America/Mexico_City', utcOffsetMinutes: -360, weight: 65 },
  { name: 'Guadalajara', country: 'mx', lat: 20.6597, lon: -103.3496, timezone: 'America/Mexico_City', utcOffsetMinutes: -360, weight: 35 },
  { name: 'Mumbai', country: 'in', lat: 19.076, lon: 72.8777, timezone: 'Asia/Kolkata', utcOffsetMinutes: 330, weight: 40 },
  { name: 'Bengaluru', country: 'in', lat: 12.9716, lon: 77.5946, timezone: 'Asia/Kolkata', utcOffsetMinutes: 330, weight: 35 },
  { name: 'Delhi', country: 'in', lat: 28.7041, lon: 77.1025, timezone: 'Asia/Kolkata', utcOffsetMinutes: 330, weight: 25 },
  { name: 'Tokyo', country: 'jp', lat: 35.6762, lon: 139.6503, timezone: 'Asia/Tokyo', utcOffsetMinutes: 540, weight: 70 },
  { name: 'Osaka', country: 'jp', lat: 34.6937, lon: 135.5023, timezone: 'Asia/Tokyo', utcOffsetMinutes: 540, weight: 30 },
  { name: 'Johannesburg', country: 'za', lat: -26.2041, lon: 28.0473, timezone: 'Africa/Johannesburg', utcOffsetMinutes: 120, weight: 60 },
  { name: 'Cape Town', country: 'za', lat: -33.9249, lon: 18.4241, timezone: 'Africa/Johannesburg', utcOffsetMinutes: 120, weight: 40 },
  { name: 'Singapore', country: 'sg', lat: 1.3521, lon: 103.8198, timezone: 'Asia/Singapore', utcOffsetMinutes: 480, weight: 0 },
  { name: 'Bucharest', country: 'ro', lat: 44.4268, lon: 26.1025, timezone: 'Europe/Bucharest', utcOffsetMinutes: 120, weight: 0 },
];

/**
 * Data-centre networks: crawlers come from the `bot` ones, and every address
 * the generator uses in a `blacklist` one is on the IP blacklist.
 */
export interface HostingNetwork {
  key: string;
  org: string;
  city: string;
  /** The /16 the network announces, as its two leading octets. */
  prefix: [number, number];
  use: 'bot' | 'blacklist';
}

export const HOSTING_NETWORKS: HostingNetwork[] = [
  { key: 'aws-us', org: 'Amazon.com, Inc.', city: 'Ashburn', prefix: [54, 236], use: 'bot' },
  { key: 'aws-sg', org: 'Amazon.com, Inc.', city: 'Singapore', prefix: [13, 250], use: 'bot' },
  { key: 'google', org: 'Google LLC', city: 'Mountain View', prefix: [66, 249], use: 'bot' },
  { key: 'microsoft', org: 'Microsoft Corporation', city: 'Boydton', prefix: [157, 55], use: 'bot' },
  { key: 'digitalocean-fra', org: 'DigitalOcean, LLC', city: 'Frankfurt', prefix: [164, 90], use: 'bot' },
  { key: 'ahrefs', org: 'Ahrefs Pte Ltd', city: 'Singapore', prefix: [202, 8], use: 'bot' },
  { key: 'ovh', org: 'OVH SAS', city: 'Roubaix', prefix: [51, 38], use: 'blacklist' },
  { key: 'hetzner', org: 'Hetzner Online GmbH', city: 'Falkenstein', prefix: [95, 217], use: 'blacklist' },
  { key: 'm247', org: 'M247 Europe SRL', city: 'Bucharest', prefix: [89, 46], use: 'blacklist' },
  { key: 'digitalocean-ams', org: 'DigitalOcean, LLC', city: 'Amsterdam', prefix: [178, 62], use: 'blacklist' },
];

/**
 * How a client fetches an episode:
 * - stream: AVPlayer style, a 2-byte probe then fixed-size range chunks;
 * - download: whole file ('bytes=0-'), sometimes resumed later;
 * - browser: an <audio> element, no Range header or 'bytes=0-', then seeks;
 * - speaker: one request, with or without a Range header.
 */
export type FetchPattern = 'stream' | 'download' | 'browser' | 'speaker';

export interface ListenerAgent {
  ua: string;
  /** parsed_ua: the name the built-in user-agent set gives the agent (its downloads get the same). */
  app: string;
  os: string;
  device: string;
  /** Share of listeners, in percent. */
  weight: number;
  pattern: FetchPattern;
}

export const LISTENER_AGENTS: ListenerAgent[] = [
  { ua: 'AppleCoreMedia/1.0.0.21E236 (iPhone; U; CPU OS 17_4 like Mac OS X; en_us)', app: 'AppleCoreMedia', os: 'iOS', device: 'smartphone', weight: 11, pattern: 'stream' },
  { ua: 'AppleCoreMedia/1.0.0.21F90 (iPhone; U; CPU OS 17_5_1 like Mac OS X; en_gb)', app: 'AppleCoreMedia', os: 'iOS', device: 'smartphone', weight: 5, pattern: 'stream' },
  { ua: 'AppleCoreMedia/1.0.0.22A3354 (iPhone; U; CPU OS 18_0 like Mac OS X; en_us)', app: 'AppleCoreMedia', os: 'iOS', device: 'smartphone', weight: 5, pattern: 'stream' },
  { ua: 'AppleCoreMedia/1.0.0.21E236 (iPad; U; CPU OS 17_4 like Mac OS X; de_de)', app: 'AppleCoreMedia', os: 'iOS', device: 'tablet', weight: 2, pattern: 'stream' },
  { ua: 'AppleCoreMedia/1.0.0.23E224 (Macintosh; U; Intel Mac OS X 14_4_1; en_us)', app: 'AppleCoreMedia', os: 'macOS', device: 'desktop', weight: 2, pattern: 'stream' },
  { ua: 'Podcasts/1740.2 CFNetwork/1494.0.7 Darwin/23.4.0', app: 'Apple Podcasts', os: 'iOS', device: 'smartphone', weight: 9, pattern: 'download' },
  { ua: 'Podcasts/1750.3 CFNetwork/1496.0.7 Darwin/23.5.0', app: 'Apple Podcasts', os: 'iOS', device: 'smartphone', weight: 6, pattern: 'download' },
  { ua: 'Podcasts/1760.1 CFNetwork/1568.100.1 Darwin/24.0.0', app: 'Apple Podcasts', os: 'iOS', device: 'smartphone', weight: 3, pattern: 'download' },
  { ua: 'AirPodcasts/4022.700.8 CFNetwork/1410.0.3 Darwin/22.6.0', app: 'Apple HomePod', os: 'audioOS', device: 'smart speaker', weight: 1, pattern: 'speaker' },
  { ua: 'atc/1.0 watchOS/10.4 model/Watch6,2 hwp/t8301 build/21T216 (6; dt:249)', app: 'Apple Podcasts (Watch)', os: 'watchOS', device: 'smartwatch', weight: 1, pattern: 'download' },
  { ua: 'Spotify/8.9.36 iOS/17.4 (iPhone15,2)', app: 'Spotify', os: 'iOS', device: 'smartphone', weight: 7, pattern: 'download' },
  { ua: 'Spotify/8.9.40 iOS/17.5.1 (iPhone14,5)', app: 'Spotify', os: 'iOS', device: 'smartphone', weight: 4, pattern: 'download' },
  { ua: 'Spotify/8.9.36 Android/34 (SM-S918B)', app: 'Spotify', os: 'Android', device: 'smartphone', weight: 5, pattern: 'download' },
  { ua: 'Spotify/8.9.40 Android/33 (Pixel 7)', app: 'Spotify', os: 'Android', device: 'smartphone', weight: 4, pattern: 'download' },
  { ua: 'Spotify/8.9.28 Android/31 (SM-A525F)', app: 'Spotify', os: 'Android', device: 'smartphone', weight: 2, pattern: 'download' },
  { ua: 'Spotify/1.2.37.701 Win32_x86_64/0 (PC desktop)', app: 'Spotify', os: 'Windows', device: 'desktop', weight: 2, pattern: 'download' },
  { ua: 'Spotify/1.2.37.701 OSX_ARM64/OS X 14.4.1 [arm 2]', app: 'Spotify', os: 'macOS', device: 'desktop', weight: 1, pattern: 'download' },
  { ua: 'Overcast/3.0 (+http://overcast.fm/; iOS podcast app)', app: 'Overcast', os: 'iOS', device: 'smartphone', weight: 3, pattern: 'download' },
  { ua: 'Overcast/794 CFNetwork/1494.0.7 Darwin/23.4.0', app: 'Overcast', os: 'iOS', device: 'smartphone', weight: 1, pattern: 'download' },
  { ua: 'Pocket%20Casts/7.62.0.2 CFNetwork/1494.0.7 Darwin/23.4.0', app: 'Pocket Casts', os: 'iOS', device: 'smartphone', weight: 2, pattern: 'download' },
  { ua: 'Pocket Casts', app: 'Pocket Casts', os: 'Android', device: 'smartphone', weight: 2, pattern: 'download' },
  { ua: 'CastBox/10.6.1-240315021 (Linux;Android 14) ExoPlayerLib/2.10.4', app: 'CastBox', os: 'Android', device: 'smartphone', weight: 1.5, pattern: 'download' },
  { ua: 'fm.castbox.audiobook.radio.podcast/240611306 (Linux; U; Android 13; en_GB; SM-A536B; Build/TP1A.220624.014; Cronet/126.0.6423.0)', app: 'CastBox', os: 'Android', device: 'smartphone', weight: 0.5, pattern: 'download' },
  { ua: 'PodcastAddict/v5 ( https://podcastaddict.com/; Android podcast app)', app: 'Podcast Addict', os: 'Android', device: 'smartphone', weight: 2, pattern: 'download' },
  { ua: 'Podcast Addict - Dalvik/2.1.0 (Linux; U; Android 14; SM-G991B Build/UP1A.231005.007)', app: 'Podcast Addict', os: 'Android', device: 'smartphone', weight: 1, pattern: 'download' },
  { ua: 'AmazonMusic/24.11.2 iPhone14,7 CFNetwork/1494.0.7 Darwin/23.4.0', app: 'Amazon Music', os: 'iOS', device: 'smartphone', weight: 1, pattern: 'download' },
  { ua: 'AmazonMusic/24.10.0 Dalvik/2.1.0 (Linux; U; Android 14; SM-S911B Build/UP1A.231005.007)', app: 'Amazon Music', os: 'Android', device: 'smartphone', weight: 1.5, pattern: 'download' },
  { ua: 'AmazonMusic/24.11.2 iPad13,16 CFNetwork/1494.0.7 Darwin/23.4.0', app: 'Amazon Music', os: 'iOS', device: 'tablet', weight: 0.5, pattern: 'download' },
  { ua: 'com.google.android.apps.youtube.music/62354340 (Linux; U; Android 14; en_US; Pixel 7 Pro; Build/UP1A.231105.002; Cronet/114.0.5735.84)', app: 'YouTube Music', os: 'Android', device: 'smartphone', weight: 1, pattern: 'download' },
  { ua: 'AlexaMediaPlayer/2.1.4616.0 (Linux;Android 6.0.1) ExoPlayerLib/1.5.9', app: 'Alexa-enabled device', os: 'Fire OS', device: 'smart speaker', weight: 1.5, pattern: 'speaker' },
  { ua: 'Echo/1.0(APNG)', app: 'Alexa-enabled device', os: 'Fire OS', device: 'smart speaker', weight: 1, pattern: 'speaker' },
  { ua: 'Sonos/79.1-52010 (ZPS29)', app: 'Sonos', os: 'Linux', device: 'smart speaker', weight: 1, pattern: 'speaker' },
  { ua: 'Mozilla/5.0 (X11; Linux aarch64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/90.0.4430.225 Safari/537.36 CrKey/1.56.500000 DeviceType/SmartSpeaker', app: 'Chromecast device', os: 'Linux', device: 'smart speaker', weight: 1, pattern: 'speaker' },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', app: 'Chrome', os: 'Windows', device: 'desktop', weight: 2, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', app: 'Chrome', os: 'macOS', device: 'desktop', weight: 1, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15', app: 'Safari', os: 'macOS', device: 'desktop', weight: 1, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', app: 'Firefox', os: 'Windows', device: 'desktop', weight: 0.5, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', app: 'Firefox', os: 'Linux', device: 'desktop', weight: 0.3, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1', app: 'Safari', os: 'iOS', device: 'smartphone', weight: 1, pattern: 'browser' },
  { ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36', app: 'Chrome', os: 'Android', device: 'smartphone', weight: 0.7, pattern: 'browser' },
];

/** Crawlers and scripts; every one matches BOT_UA_PATTERN. */
export const BOT_AGENTS: { ua: string; app: string; network: string; weight: number }[] = [
  { ua: 'curl/8.4.0', app: 'curl', network: 'aws-us', weight: 2 },
  { ua: 'curl/8.7.1', app: 'curl', network: 'digitalocean-fra', weight: 1 },
  { ua: 'python-requests/2.31.0', app: 'python-requests', network: 'aws-us', weight: 2 },
  { ua: 'python-requests/2.32.3', app: 'python-requests', network: 'aws-sg', weight: 1 },
  { ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', app: 'Googlebot', network: 'google', weight: 2 },
  { ua: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', app: 'Microsoft Bingbot', network: 'microsoft', weight: 1.5 },
  { ua: 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', app: 'AhrefsBot', network: 'ahrefs', weight: 1 },
  { ua: 'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)', app: 'SEMrushBot', network: 'aws-us', weight: 0.5 },
];

/** Matches every BOT_AGENTS string and no LISTENER_AGENTS or BLACKLISTED_AGENTS string. */
export const BOT_UA_PATTERN = '(?i)(bot|crawler|spider|curl/|python-requests|wget)';

/** What scrapers on blacklisted addresses send: a spoofed app string or a bare library. */
export const BLACKLISTED_AGENTS: { ua: string; app: string }[] = [
  { ua: 'AppleCoreMedia/1.0.0.21E236 (iPhone; U; CPU OS 17_4 like Mac OS X; en_us)', app: 'AppleCoreMedia' },
  { ua: 'Lavf/60.16.100', app: 'ffmpeg' },
  { ua: 'okhttp/4.12.0', app: 'okhttp' },
];

/** Browsers on podcast websites, grouped by the operating system of the device. */
export const WEB_BROWSERS: { ua: string; os: 'iOS' | 'Android' | 'macOS' | 'Windows' | 'Linux'; weight: number }[] = [
  { ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1', os: 'iOS', weight: 22 },
  { ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', os: 'iOS', weight: 12 },
  { ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1', os: 'iOS', weight: 4 },
  { ua: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36', os: 'Android', weight: 16 },
  { ua: 'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36', os: 'Android', weight: 4 },
  { ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15', os: 'macOS', weight: 8 },
  { ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', os: 'macOS', weight: 7 },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', os: 'Windows', weight: 16 },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0', os: 'Windows', weight: 5 },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', os: 'Windows', weight: 3 },
  { ua: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', os: 'Linux', weight: 2 },
  { ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', os: 'Linux', weight: 1 },
];

/** Local-time shape of listening and browsing, hour 0..23 (commute peak in the morning). */
export const HOURLY_ACTIVITY = [0.15, 0.08, 0.05, 0.04, 0.05, 0.12, 0.45, 0.9, 1.0, 0.85, 0.7, 0.65, 0.7, 0.65, 0.6, 0.6, 0.65, 0.75, 0.7, 0.6, 0.55, 0.5, 0.4, 0.25];
/** Monday..Sunday. */
export const WEEKDAY_ACTIVITY = [1.0, 0.98, 1.0, 0.97, 0.92, 0.72, 0.7];

/** Browser families seen on smart-link pages and the platform they run on. */
export const LINK_BROWSERS: { family: string; platform: 'ios' | 'android' | 'desktop'; weight: number }[] = [
  { family: 'Mobile Safari', platform: 'ios', weight: 40 },
  { family: 'Chrome Mobile iOS', platform: 'ios', weight: 4 },
  { family: 'Chrome Mobile', platform: 'android', weight: 24 },
  { family: 'Samsung Internet', platform: 'android', weight: 4 },
  { family: 'Chrome', platform: 'desktop', weight: 16 },
  { family: 'Safari', platform: 'desktop', weight: 6 },
  { family: 'Firefox', platform: 'desktop', weight: 3 },
  { family: 'Edge', platform: 'desktop', weight: 3 },
];

/**
 * How viewers reach a smart link. A mobile viewer arriving from an app with
 * an in-app browser shows up with that browser's family.
 */
export const LINK_SOURCES: { source: string; medium: string; campaign: string; refererDomain: string; inAppFamily: string; weight: number }[] = [
  { source: '', medium: '', campaign: '', refererDomain: '', inAppFamily: '', weight: 26 },
  { source: 'instagram', medium: 'social', campaign: 'bio-link', refererDomain: 'instagram.com', inAppFamily: 'Instagram', weight: 14 },
  { source: 'instagram', medium: 'social', campaign: 'new-episode', refererDomain: 'l.instagram.com', inAppFamily: 'Instagram', weight: 6 },
  { source: 'newsletter', medium: 'email', campaign: 'weekly-newsletter', refererDomain: '', inAppFamily: '', weight: 12 },
  { source: 'newsletter', medium: 'email', campaign: 'weekly-newsletter', refererDomain: 'mail.google.com', inAppFamily: '', weight: 3 },
  { source: 'twitter', medium: 'social', campaign: 'new-episode', refererDomain: 't.co', inAppFamily: '', weight: 8 },
  { source: 'facebook', medium: 'social', campaign: 'new-episode', refererDomain: 'l.facebook.com', inAppFamily: 'Facebook', weight: 6 },
  { source: 'google', medium: 'cpc', campaign: 'spring-promo', refererDomain: 'google.com', inAppFamily: '', weight: 5 },
  { source: 'linkedin', medium: 'social', campaign: 'guest-share', refererDomain: 'linkedin.com', inAppFamily: '', weight: 3 },
  { source: 'bluesky', medium: 'social', campaign: 'new-episode', refererDomain: 'bsky.app', inAppFamily: '', weight: 2 },
  { source: 'youtube', medium: 'video', campaign: 'episode-description', refererDomain: 'youtube.com', inAppFamily: '', weight: 2 },
  { source: '', medium: '', campaign: '', refererDomain: 'google.com', inAppFamily: '', weight: 8 },
  { source: '', medium: '', campaign: '', refererDomain: 'reddit.com', inAppFamily: '', weight: 3 },
  { source: '', medium: '', campaign: '', refererDomain: 'podnews.net', inAppFamily: '', weight: 2 },
];

/** open_param values a smart link offers, with how often each platform's viewers pick them. */
export const LINK_OPEN_APPS = ['apple', 'spotify', 'overcast', 'pocketcasts', 'castbox', 'youtube', 'amazon'];
export const LINK_OPEN_WEIGHTS: Record<'ios' | 'android' | 'desktop', number[]> = {
  ios: [55, 28, 7, 4, 1, 3, 2],
  android: [0, 45, 0, 12, 8, 20, 15],
  desktop: [30, 45, 0, 0, 0, 20, 5],
};

/** Podcast website merchandise and membership tiers (label, price). */
export const SHOP_PRODUCTS: [string, number][] = [['t-shirt', 24], ['mug', 16], ['hoodie', 49], ['sticker-pack', 6], ['tote-bag', 19]];
export const MEMBERSHIP_TIERS: [string, number][] = [['monthly', 5], ['supporter', 10], ['annual', 50]];
/** Apps a website's "listen on" buttons point to. */
export const LISTEN_ON_APPS = ['apple', 'spotify', 'overcast', 'pocketcasts', 'youtube', 'amazon'];
