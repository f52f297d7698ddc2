"""A synthetic episode corpus for search benchmarks: people, projects, statements, chatter.

Seeded, so every run sees the same texts; tenants get fixed shares of it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from numpy.typing import NDArray

SEED = 20_260_501
SHARES = (("tenant_0.1pct", 0.001), ("tenant_1pct", 0.01), ("tenant_10pct", 0.1))
OTHER_TENANTS = 60

Indices = NDArray[np.int64]


def _words(text: str) -> list[str]:
    return text.split()


def _items(text: str) -> list[str]:
    return text.split(", ")


_FIRST = _words(
    "Alice Amara Ben Bruno Carla Chen Dana Diego Elena Emeka Farah Felix Grace Gustavo Hana "
    "Hugo Ines Ivan Jade Jonas Kai Keiko Lars Leila Marco Maya Nadia Nikhil Olga Omar Priya "
    "Pablo Quinn Rosa Ravi Sara Sven Tariq Tessa Uma Victor Wen Xavier Yara Yusuf Zoe Zhang "
    "Liam Noor Aiko"
)
_LAST = _words(
    "Okafor Lindqvist Moreau Tanaka Alvarez Kowalski Nguyen Haddad Fischer Romano Patel Silva "
    "Andersen Dubois Ivanova Kim Mendes Novak Oliveira Park Rossi Schmidt Sato Torres Ueda "
    "Varga Weber Yilmaz Zhou Brennan Costa Dimitrov Eriksen Farouk Garcia Horvat Iyer Jensen "
    "Kaur Lopez Mwangi Nakamura Ortiz Petrov Quispe Rahman Sousa Takahashi Ulloa Vogel"
)
_ADJECTIVES = _words(
    "Amber Blue Crimson Silent Rapid Golden Iron Northern Quiet Bright Hidden Swift Lunar "
    "Solar Coastal Urban Arctic Velvet Copper Emerald"
)
_NOUNS = _words(
    "Falcon Harbor Lantern Orchid Summit Beacon Meadow Compass Anchor Glacier Ember Canyon "
    "Willow Atlas Quartz Horizon Pioneer Delta Nimbus Juniper"
)
_CITIES = _words(
    "Lisbon Osaka Nairobi Toronto Krakow Austin Lyon Seoul Bogota Oslo Melbourne Cairo Dublin "
    "Porto Denver Mumbai Hamburg Valencia Quito Tallinn Halifax Kyoto Accra Perth Zagreb"
)
_COMPANIES = _items(
    "Acme Logistics, Northwind Bank, Bluefin Health, Orbital Foods, Kestrel Labs, Juniper "
    "Insurance, Helios Energy, Tidewater Shipping, Maple Robotics, Sable Media, Granite "
    "Consulting, Vireo Games"
)
_TITLES = _items(
    "staff engineer, product manager, data analyst, nurse practitioner, sales director, "
    "UX researcher, site reliability engineer, accountant, head of marketing, teacher, "
    "legal counsel, operations lead"
)
_FOODS = _items(
    "ramen, paella, mushroom risotto, falafel wraps, pho, margherita pizza, bibimbap, "
    "tacos al pastor, lentil soup, sushi, pad thai, jollof rice, pierogi, shakshuka"
)
_ALLERGIES = _items("peanuts, shellfish, gluten, lactose, penicillin, pollen, cats, sesame, eggs")
_LANGUAGES = _items("Portuguese, Japanese, Swahili, French, Polish, Spanish, Korean, German, Hindi")
_HOBBIES = _items(
    "bouldering, sourdough baking, chess, trail running, watercolor painting, birdwatching, "
    "salsa dancing, woodworking, sailing, pottery, amateur astronomy, cycling"
)
_CARS = _items(
    "a blue Corolla, a used Tesla Model 3, a red Vespa, a Subaru Outback, an old Volvo wagon, "
    "no car"
)
_PETS = _words("Biscuit Mochi Pepper Luna Rocket Olive Ziggy Maple Bruno Pixel Nori Scout")
_COFFEE = _items(
    "oat flat white, double espresso, iced americano, chai latte, decaf cappuccino, green tea"
)
_TIMEZONES = _words("UTC-5 UTC+1 UTC+9 UTC-8 UTC+3 UTC+5:30 UTC+10 UTC-3")
_STATUSES = _items("on track, at risk, blocked, paused, shipped, in review, cancelled")
_PRIORITIES = _words("P0 P1 P2 P3")
_REGIONS = _words("eu-west-1 us-east-2 ap-northeast-1 sa-east-1 eu-central-1 us-west-2")
_BLOCKERS = _items(
    "a missing security review, the vendor contract, flaky integration tests, a database "
    "migration, budget approval, the design sign-off, an expired certificate"
)
_WEEKDAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
_MONTHS = "January February March April May June July August September October November December"
_MONTH_NAMES = _words(_MONTHS)


def _date(rng: random.Random) -> str:
    day = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange(1_200))
    style = rng.randrange(5)
    if style == 0:
        return day.strftime("%Y-%m-%d")
    if style == 1:
        return f"{_MONTH_NAMES[day.month - 1]} {day.day}, {day.year}"
    if style == 2:
        return f"{day.day} {_MONTH_NAMES[day.month - 1][:3]}"
    if style == 3:
        return f"{rng.choice(('last', 'next', 'this'))} {rng.choice(_WEEKDAYS)}"
    return f"{day.day:02d}/{day.month:02d}/{day.year}"


def _time(rng: random.Random) -> str:
    return f"{rng.randrange(7, 20)}:{rng.choice(('00', '15', '30', '45'))}"


def _phone(rng: random.Random) -> str:
    return f"+{rng.randrange(1, 99)} {rng.randrange(100, 999)} {rng.randrange(1000, 9999)}"


def _email(rng: random.Random, name: str) -> str:
    first, last = name.lower().split()
    domain = rng.choice(("example.com", "mail.test", "corp.example", "inbox.test"))
    return f"{first}.{last}{rng.randrange(100)}@{domain}"


def _money(rng: random.Random) -> str:
    return f"${rng.randrange(5, 900) * 1_000:,}"


def _city(rng: random.Random) -> str:
    return rng.choice(_CITIES)


def _person_name(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _project_name(rng: random.Random) -> str:
    return f"Project {rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}"


# attribute -> (machine key, value generator); the name is passed for values that use it.
_PERSON_ATTRIBUTES: dict[str, tuple[str, Callable[[random.Random, str], str]]] = {
    "phone number": ("phone", lambda r, n: _phone(r)),
    "email address": ("email", _email),
    "home city": ("city", lambda r, n: r.choice(_CITIES)),
    "employer": ("employer", lambda r, n: r.choice(_COMPANIES)),
    "job title": ("title", lambda r, n: r.choice(_TITLES)),
    "favorite food": ("favorite_food", lambda r, n: r.choice(_FOODS)),
    "allergy": ("allergy", lambda r, n: r.choice(_ALLERGIES)),
    "birthday": ("birthday", lambda r, n: f"{r.choice(_MONTH_NAMES)} {r.randrange(1, 29)}"),
    "preferred language": ("language", lambda r, n: r.choice(_LANGUAGES)),
    "dog's name": ("pet", lambda r, n: r.choice(_PETS)),
    "hobby": ("hobby", lambda r, n: r.choice(_HOBBIES)),
    "car": ("car", lambda r, n: r.choice(_CARS)),
    "coffee order": ("coffee", lambda r, n: r.choice(_COFFEE)),
    "time zone": ("timezone", lambda r, n: r.choice(_TIMEZONES)),
    "manager": ("manager", lambda r, n: _person_name(r)),
    "dentist appointment": ("dentist", lambda r, n: f"{_date(r)} at {_time(r)}"),
    "flight": (
        "flight",
        lambda r, n: f"{r.choice('AFLBUK')}{r.randrange(100, 9999)} to {_city(r)}",
    ),
    "salary": ("salary", lambda r, n: _money(r)),
}
_PROJECT_ATTRIBUTES: dict[str, tuple[str, Callable[[random.Random, str], str]]] = {
    "deadline": ("deadline", lambda r, n: _date(r)),
    "budget": ("budget", lambda r, n: _money(r)),
    "status": ("status", lambda r, n: r.choice(_STATUSES)),
    "owner": ("owner", lambda r, n: _person_name(r)),
    "launch date": ("launch", lambda r, n: _date(r)),
    "priority": ("priority", lambda r, n: r.choice(_PRIORITIES)),
    "server region": ("region", lambda r, n: r.choice(_REGIONS)),
    "blocker": ("blocker", lambda r, n: r.choice(_BLOCKERS)),
    "client": ("client", lambda r, n: r.choice(_COMPANIES)),
}

_STATEMENTS = (
    ("message", "{name} told me their {attr} is {value}."),
    ("message", "Heads up: {name}'s {attr} changed to {value} as of {date}."),
    ("message", "I think {name} mentioned the {attr} was {value}, but double-check."),
    ("message", "FYI {name} updated the {attr}: {value}."),
    ("message", "Per our call on {date}, {name} confirmed {attr} = {value}."),
    ("message", "Correction: the {attr} for {name} is {value}, not what I wrote before."),
    ("tool_result", "crm.lookup(name='{name}') -> {key}: {value} (fetched {date})"),
    ("tool_result", '{{"subject": "{name}", "field": "{key}", "value": "{value}"}}'),
    ("ticket", "Ticket #{num}: {name} asks us to set the {attr} to {value}. Priority {prio}."),
    ("event", "Calendar {date}: {name}, {attr} noted as {value}."),
    ("message", "{name} is still on {value} for the {attr}, nothing new since {date}."),
    ("file", "notes_{num}.md: {name} / {attr}: {value} / last checked {date}"),
)
_CHATTER = (
    "Thanks, talk {weekday}!",
    "{name} says hi and asks how the weather is in {city}.",
    "Lunch at the {food} place was great, {name} recommends it.",
    "Reminder: standup moved to {time} on {weekday}.",
    "Can someone restart the build? It failed again at {time}.",
    "That meeting with {name} could have been an email.",
    "Is the office in {city} open on {weekday}? Asking for {name}.",
    "Traffic was terrible this morning, I'll be {minutes} minutes late.",
    "Did anyone see the game on {weekday}? Unbelievable finish.",
    "Ordering {food} for the team, reply by {time} if you want some.",
    "{name} shared a funny video about {hobby}, worth a watch.",
    "The printer on floor {floor} is jammed again.",
    "Happy Friday everyone, see you {date}.",
    "Wi-Fi in the {city} office keeps dropping since {date}.",
)
_PREFIXES = ("", "", "", "Morning! ", "Quick one: ", "Note: ", "Update - ", "ok so ")
_SUFFIXES = ("", "", "", " Thanks!", " Let me know if that's wrong.", " :)", " (via Slack)")

# Held-out question templates: no episode is phrased like these.
QUESTIONS = (
    "What is {name}'s current {attr}?",
    "Did {name} ever change the {attr}?",
    "remind me of the {attr} for {name}",
    "{attr} of {name}?",
    "Has anything happened recently with the {attr} of {name}?",
    "Which {attr} does {name} have now?",
    "Do we know {name}'s {attr} yet?",
    "Where did {name} say the {attr} stands?",
)
_CHATTER_SHARE = 0.3


@dataclass(frozen=True, slots=True)
class Episode:
    """One synthetic episode: its text, kind, subject and (for a statement) the attribute."""

    text: str
    kind: str
    subject: str
    attribute: str | None
    occurred_at: datetime


def _fill(rng: random.Random, template: str, **known: str) -> str:
    values = {
        "date": _date(rng),
        "time": _time(rng),
        "weekday": rng.choice(_WEEKDAYS),
        "city": rng.choice(_CITIES),
        "food": rng.choice(_FOODS),
        "hobby": rng.choice(_HOBBIES),
        "num": str(rng.randrange(1_000, 99_999)),
        "prio": rng.choice(_PRIORITIES),
        "minutes": str(rng.randrange(5, 60, 5)),
        "floor": str(rng.randrange(1, 12)),
        **known,
    }
    return template.format(**values)


def _episode(rng: random.Random, subjects: Sequence[str], start: datetime) -> Episode:
    name = rng.choice(subjects)
    occurred_at = start + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
    if rng.random() < _CHATTER_SHARE:
        text = rng.choice(_PREFIXES) + _fill(rng, rng.choice(_CHATTER), name=name)
        text += rng.choice(_SUFFIXES)
        return Episode(text, "message", name, None, occurred_at)
    table = _PROJECT_ATTRIBUTES if name.startswith("Project ") else _PERSON_ATTRIBUTES
    attribute = rng.choice(sorted(table))
    key, value = table[attribute]
    kind, template = rng.choice(_STATEMENTS)
    body = _fill(rng, template, name=name, attr=attribute, key=key, value=value(rng, name))
    text = rng.choice(_PREFIXES) + body + rng.choice(_SUFFIXES)
    return Episode(text, kind, name, attribute, occurred_at)


def generate_corpus(n: int, *, seed: int = SEED) -> list[Episode]:
    """``n`` varied episodes about people and projects, with chatter in between."""
    rng = random.Random(seed)
    people = sorted({_person_name(rng) for _ in range(3_000)})
    projects = sorted({_project_name(rng) for _ in range(300)})
    subjects = people + projects
    start = datetime(2023, 1, 1, tzinfo=UTC)
    return [_episode(rng, subjects, start) for _ in range(n)]


def assign_tenants(n: int, *, seed: int = SEED) -> tuple[list[str], dict[str, Indices]]:
    """Each episode's tenant: the measured tenants get their share, other tenants the rest."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    owners = np.empty(n, dtype=object)
    scopes: dict[str, Indices] = {}
    start = 0
    for name, share in SHARES:
        size = max(1, round(n * share))
        members = np.sort(order[start : start + size]).astype(np.int64)
        owners[members] = name
        scopes[name] = members
        start += size
    rest = order[start:]
    others = rng.integers(0, OTHER_TENANTS, size=len(rest))
    for index, other in zip(rest.tolist(), others.tolist(), strict=True):
        owners[index] = f"other_{other:02d}"
    return [str(owner) for owner in owners], scopes


def generate_questions(
    corpus: Sequence[Episode], scope: Indices, count: int, *, seed: int
) -> list[str]:
    """``count`` questions about subjects and attributes that the scope's episodes mention."""
    rng = random.Random(seed)
    statements = [int(i) for i in scope if corpus[int(i)].attribute is not None]
    pool = statements or [int(i) for i in scope]
    questions = []
    for _ in range(count):
        episode = corpus[rng.choice(pool)]
        attribute = episode.attribute or "latest news"
        questions.append(rng.choice(QUESTIONS).format(name=episode.subject, attr=attribute))
    return questions
